"""Players in Redis (:class:`~solrace.store.player_base.PlayerStore`), shared by every process.
The keys, the stored form of a result and the script every score goes through are in
:mod:`solrace.store.redis_player_data`.

Every key has the hash tag ``{pl}``: scoring a race writes several players' ratings in one
script, which a Redis Cluster only runs on keys of one slot. Keys::

    sr:{pl}:p:ID            hash: name, created_at, password, nk (his name's key, below)
    sr:{pl}:nk:V:KEY        the id of the player whose name's key is KEY under the names' rule
                            V (solrace.core.names.VERSION; SET NX claims it)
    sr:{pl}:names           the rule V whose index is complete (see "Names" below)
    sr:{pl}:key:HASH        the id of the player one of whose browser keys hashes to HASH
    sr:{pl}:t:HASH          a sign-in ticket: "player-id expires-at" (cleared after an hour)
    sr:{pl}:fail:KEY        hash: n, last: failed sign-ins under KEY (expires an hour after
                            the last; KEY: solrace.service.accounts)
    sr:{pl}:nets:ID         sorted set: the networks (tags) the player signed in from, by time
    sr:{pl}:acct:DAY:TAG    accounts made from a network that UTC day (expires after two days)
    sr:{pl}:r:ID            hash: game -> msgpack [mu, sigma, races]
    sr:{pl}:res:ID          list: the races of the player's results, newest first (capped;
                            the results themselves, and every fair-play key: see
                            solrace.store.redis_player_data)
    sr:{pl}:lb:GAME         sorted set: rated players of GAME by mu
    sr:{pl}:scored          hash: race -> the ``ratings`` body (JSON) of every scored race
    sr:{pl}:toscore         set: races a player joined, not scored yet
    sr:{pl}:daily:GAME:DAY  "seed salt" of the day's deal (SET NX: the first one drawn)
    sr:{pl}:att:GAME:DAY    hash: player id -> his attempt's race
    sr:{pl}:look:GAME:DAY   hash: player id -> "NET AT": where and when he opened it
    sr:{pl}:dr:GAME:DAY     hash: the day's results (player -> msgpack map)
    sr:{pl}:days:ID:GAME    set: the days he played GAME's daily deal to its end

Names: a name's key is its skeleton (``identity.name_key``); the index of keys lives under
the rule's version, so a new rule (a newer Unicode table) builds a new index and never
disturbs the old one. The first process of a new version to touch a name builds it: every
player, oldest first, claims his key (SET NX); a player whose key an older one claimed gets
a key of his own (``identity.own_key``) which no name can have, so his name stays his.
Processes that build it at once end with the same index (each goes oldest first). Players
created meanwhile by a process of the version before (a rolling upgrade) are not in it:
finish such an upgrade before players sign up again (the keys before skeletons,
``sr:{pl}:name:FOLDED``, are left as they were).

Scoring reads the counted players' ratings (and, when one is written for the first time, that
it is absent), works out the new ones here, and writes everything a score writes — results,
ratings, leaderboard, a held race's rating inputs, the flagged set, the history of rated pairs,
walkouts, the daily table, and the mark that the race is scored — in one ``APPLY`` that first
checks that the race is not scored yet and that every rating it read is still as it was; if one
changed meanwhile (another race of the same player scored, a clear or a refund, by any process)
nothing is written and the scorer reads again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, cast

import msgpack

from solrace.core.fairplay import suspicion_of
from solrace.core.identity import Player, name_key, own_key
from solrace.core.names import VERSION as NAMES_VERSION
from solrace.core.rating import Rating
from solrace.core.scoring import Result, Scoring, changes, held_entries, new_ratings, with_ratings
from solrace.runtime.redis_connect import TO_SCORE, RedisClient
from solrace.settings import (
    KNOWN_NETWORK_DAYS,
    KNOWN_NETWORKS,
    REPEAT_WINDOW_MS,
    SIGN_IN_FORGET_S,
    WALKOUT_WINDOW_MS,
)
from solrace.store.player_base import STATS_RESULTS
from solrace.store.redis_player_data import (
    CLOSURES,
    FLAGGED,
    HELD,
    SCORED,
    Conflict,
    Ops,
    Scripts,
    board_key,
    day_results_key,
    days_key,
    history,
    of,
    pack_rating,
    pack_row,
    pair_key,
    pkey,
    player_key,
    ratings_key,
    result_row,
    results_key,
    stored_ratings,
    text,
    unpack_rating,
    unpack_row,
    walkouts_key,
)

log = logging.getLogger(__name__)


#: The index of names' keys under the current rule.
NAME_INDEX = f"nk:{NAMES_VERSION}:"

#: KEYS: name key, player hash, key key. ARGV: id, name, created_at, the name's key. 1, or 0 if
#: the name is taken.
CREATE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
redis.call('HSET', KEYS[2], 'name', ARGV[2], 'created_at', ARGV[3], 'nk', ARGV[4])
redis.call('SET', KEYS[3], ARGV[1])
return 1
"""

#: KEYS: new name key, old name key, player hash. ARGV: id, name, new key. 1, or 0 if taken.
RENAME = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return 0 end
if KEYS[2] ~= KEYS[1] and redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[3], 'name', ARGV[2], 'nk', ARGV[3])
return 1
"""

#: KEYS: the name's key, his own key (``identity.own_key``), player hash. ARGV: id, key, own.
#: Claims the key for the player unless an older one has it, else the fallback.
INDEX_NAME = """
local owner = redis.call('GET', KEYS[1])
if owner == false or owner == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1]); redis.call('HSET', KEYS[3], 'nk', ARGV[2]); return 1
end
redis.call('SET', KEYS[2], ARGV[1]); redis.call('HSET', KEYS[3], 'nk', ARGV[3]); return 2
"""

#: KEYS[1]: the day's counter. ARGV: cap, seconds to keep it. 1 if counted, 0 at the cap.
TAKE_ACCOUNT = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1]); redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

#: KEYS[1]: ticket. The player's id, and the ticket deleted; nil if there is none.
TAKE_TICKET = """
local pid = redis.call('GET', KEYS[1])
if pid then redis.call('DEL', KEYS[1]) end
return pid
"""

#: How many times scoring (or a moderator's clear or close) reads again after a conflict before
#: it gives up for now (the sweep comes back to the race; the moderator tries again).
SCORE_TRIES = 8


class RedisPlayers:
    """See the module docstring."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self.scripts = Scripts(client)
        self._indexed = False
        self._indexing = asyncio.Lock()

    async def _script(self, body: str, keys: list[str], args: list[Any]) -> Any:
        return await self.scripts.run(body, keys, args)

    async def _player(self, pid: str | None) -> Player | None:
        if pid is None:
            return None
        fields = await self.client.hgetall(player_key(pid))
        if not fields:
            return None
        f = {text(k): text(v) for k, v in fields.items()}
        return Player(pid, f["name"], int(f["created_at"]), f.get("password") or None)

    async def _get(self, name: str) -> str | None:
        value = await self.client.get(pkey(name))
        return None if value is None else text(value)

    # ------------------------------------------------------------------ identity
    async def _names(self) -> None:
        """Before the first name is read or claimed: the index of the current rule is
        complete (built now if no process has built it yet; see the module docstring)."""
        if self._indexed:
            return
        async with self._indexing:
            if self._indexed:
                return
            if await self._get("names") != NAMES_VERSION:
                await self.index_names()
            self._indexed = True

    async def index_names(self) -> int:
        """Build the index of names' keys under the current rule; the players whose name
        shares its key with an older player's (keyed ``identity.own_key``)."""
        players: list[tuple[int, str, str]] = []
        batch: list[str] = []

        async def read() -> None:
            async with self.client.pipeline(transaction=False) as pipe:
                for k in batch:
                    pipe.hmget(k, "name", "created_at")
                got = await pipe.execute()
            for k, (name, created) in zip(batch, got, strict=True):
                if name is not None and created is not None:
                    players.append((int(created), k.rsplit(":", 1)[1], text(name)))
            batch.clear()

        async for k in self.client.scan_iter(match=pkey("p:*"), count=1000, _type="HASH"):
            batch.append(text(k))
            if len(batch) >= 500:
                await read()
        await read()
        shared = 0
        ordered = sorted(players)
        sha = await self.client.script_load(INDEX_NAME)
        for start in range(0, len(ordered), 500):  # in order: a pipeline keeps it
            chunk = ordered[start:start + 500]
            async with self.client.pipeline(transaction=False) as pipe:
                for _, pid, name in chunk:
                    key = name_key(name)
                    pipe.evalsha(sha, 3, pkey(NAME_INDEX + key),
                                 pkey(NAME_INDEX + own_key(key, pid)), pkey(f"p:{pid}"),
                                 pid, key, own_key(key, pid))
                done = await pipe.execute()
            for (_, pid, name), claimed in zip(chunk, done, strict=True):
                if claimed == 2:
                    shared += 1
                    log.warning("player %s: his name %r is the same name as an older player's "
                                "under %s: kept, under a key of his own", pid, name,
                                NAMES_VERSION)
        await self.client.set(pkey("names"), NAMES_VERSION)
        log.info("names indexed under %s: %d players, %d sharing a name", NAMES_VERSION,
                 len(players), shared)
        return shared

    async def by_key(self, key_hash: str) -> Player | None:
        return await self._player(await self._get(f"key:{key_hash}"))

    async def by_name(self, name: str) -> Player | None:
        await self._names()
        return await self._player(await self._get(NAME_INDEX + name_key(name)))

    async def by_id(self, pid: str) -> Player | None:
        return await self._player(pid)

    async def create(self, player: Player, key_hash: str) -> bool:
        await self._names()
        key = name_key(player.name)
        done = await self._script(
            CREATE,
            [pkey(NAME_INDEX + key), player_key(player.id), pkey(f"key:{key_hash}")],
            [player.id, player.name, player.created_at, key])
        return bool(done)

    async def rename(self, pid: str, name: str) -> bool:
        await self._names()
        fields = await self.client.hmget(pkey(f"p:{pid}"), "name", "nk")
        if fields[0] is None:
            return False
        old = text(fields[1]) if fields[1] is not None else name_key(text(fields[0]))
        key = name_key(name)
        if old == own_key(key, pid):
            key = old  # his own name, kept under a key of his own (index_names)
        done = await self._script(
            RENAME,
            [pkey(NAME_INDEX + key), pkey(NAME_INDEX + old), player_key(pid)],
            [pid, name, key])
        return bool(done)

    async def set_password(self, pid: str, record: str) -> None:
        await self.client.hset(player_key(pid), "password", record)

    async def add_key(self, pid: str, key_hash: str, now: int) -> None:
        await self.client.set(pkey(f"key:{key_hash}"), pid)

    async def drop_key(self, key_hash: str) -> None:
        await self.client.delete(pkey(f"key:{key_hash}"))

    async def put_ticket(self, ticket_hash: str, pid: str, expires_at: int) -> None:
        # The expiry is checked against the server's clock; Redis only clears old ones.
        await self.client.set(pkey(f"t:{ticket_hash}"), f"{pid} {expires_at}", ex=3600)

    async def take_ticket(self, ticket_hash: str, now: int) -> str | None:
        value = await self._script(TAKE_TICKET, [pkey(f"t:{ticket_hash}")], [])
        if value is None:
            return None
        pid, expires = text(value).split(" ")
        return pid if int(expires) >= now else None

    # ------------------------------------------------------- sign-ins and accounts
    async def failures(self, keys: list[str], now: int) -> list[tuple[int, int]]:
        async with self.client.pipeline(transaction=False) as pipe:
            for k in keys:
                pipe.hmget(pkey(f"fail:{k}"), "n", "last")
            got = await pipe.execute()
        return [(int(n), int(last)) if n is not None and last is not None else (0, 0)
                for n, last in got]

    async def add_failure(self, keys: list[str], now: int) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            for k in keys:
                pipe.hincrby(pkey(f"fail:{k}"), "n", 1)
                pipe.hset(pkey(f"fail:{k}"), "last", now)
                pipe.expire(pkey(f"fail:{k}"), SIGN_IN_FORGET_S)
            await pipe.execute()

    async def clear_failures(self, keys: list[str]) -> None:
        await self.client.delete(*(pkey(f"fail:{k}") for k in keys))

    async def known_network(self, pid: str, tag: str, now: int) -> bool:
        at = await self.client.zscore(pkey(f"nets:{pid}"), tag)
        return at is not None and at > now - KNOWN_NETWORK_DAYS * 86_400_000

    async def add_network(self, pid: str, tag: str, now: int) -> None:
        k = pkey(f"nets:{pid}")
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zadd(k, {tag: now})
            pipe.zremrangebyrank(k, 0, -KNOWN_NETWORKS - 1)
            pipe.expire(k, KNOWN_NETWORK_DAYS * 86_400)
            await pipe.execute()

    async def take_account(self, tag: str, day: str, cap: int) -> bool:
        done = await self._script(TAKE_ACCOUNT, [pkey(f"acct:{day}:{tag}")],
                                  [cap, 2 * 86_400])
        return bool(done)

    # ------------------------------------------------------------------- ratings
    async def ratings(self, pid: str) -> dict[str, Rating]:
        fields = await self.client.hgetall(ratings_key(pid))
        return {text(game): unpack_rating(packed) for game, packed in fields.items()}

    async def score(self, s: Scoring) -> dict[str, Any] | None:
        for _ in range(SCORE_TRIES):
            try:
                return await self._score(s)
            except Conflict:
                continue
        raise RuntimeError(f"race {s.race}: ratings kept changing while it was scored")

    async def _score(self, s: Scoring) -> dict[str, Any] | None:
        if await self.client.hexists(SCORED, s.race):
            return None
        ops = Ops()
        ops.done_if(SCORED, s.race)
        results: list[Result] = s.results
        moves: list[dict[str, Any]] = []
        if s.rated and not s.held:
            players = [key for key, _ in s.counted if not key.startswith("bot:")]
            current: dict[str, Rating] = {}
            stored = await stored_ratings(self.client, [(pid, s.game) for pid in players])
            for pid, packed in zip(players, stored, strict=True):
                ops.same(ratings_key(pid), s.game, packed)
                if packed is not None:
                    current[pid] = unpack_rating(packed)
            new = new_ratings(s, current)
            moves = changes(s, current, new)
            results = with_ratings(s, current, new)
            for pid in players:
                ops.hset(ratings_key(pid), s.game, pack_rating(new[pid]))
                # Never back on a leaderboard once closed (checked in the script: a close may
                # come between this read and the write).
                ops.zadd(board_key(s.game), new[pid].mu, pid, unless_in=CLOSURES)
            at = results[0].at if results else 0
            for a, b in s.pairs():
                ops.recent(pair_key(a, b), at, s.race, REPEAT_WINDOW_MS, at)
        elif s.held:  # what the ratings need once a moderator clears the race
            ops.hset(HELD, s.race, msgpack.packb([s.game, held_entries(s)]))
        for res in results:
            self._add_result(ops, res)
        body = s.body(moves)
        ops.hset(SCORED, s.race, json.dumps(body))
        ops.srem(TO_SCORE, s.race)
        return body if await self.scripts.apply(ops) else None

    @staticmethod
    def _add_result(ops: Ops, res: Result) -> None:
        """Write one new result: the player's copy and history, the flagged set, his
        walkouts, the day's table and his days played."""
        packed = pack_row(result_row(res))
        ops.hset(results_key(res.player), res.race, packed)
        ops.push_result(res.player, res.race, STATS_RESULTS)
        if res.flagged:
            ops.zadd(FLAGGED, suspicion_of(res.signals), of(res.race, res.player))
        if res.walkout:
            ops.recent(walkouts_key(res.player), res.at, res.race, WALKOUT_WINDOW_MS, res.at)
        if res.kind == "daily" and res.day is not None:
            ops.hset(day_results_key(res.game, res.day), of(res.race, res.player), packed)
            if not res.aborted:  # an aborted attempt keeps no streak alive
                ops.sadd(days_key(res.player, res.game), res.day)

    async def together(self, a: str, b: str, since: int) -> int:
        return int(await self.client.zcount(pair_key(a, b), since, "+inf"))

    async def walkouts(self, pid: str, since: int) -> list[int]:
        got = await self.client.zrangebyscore(walkouts_key(pid), since, "+inf", withscores=True)
        return [int(at) for _, at in cast(list[tuple[bytes, float]], got)]

    async def scored(self, race: str) -> dict[str, Any] | None:
        body = await self.client.hget(SCORED, race)
        return None if body is None else dict(json.loads(body))

    async def to_score(self, limit: int) -> list[str]:
        members = await self.client.srandmember(TO_SCORE, limit) or []
        return [text(m) for m in members]

    async def done_scoring(self, race: str) -> None:
        await self.client.srem(TO_SCORE, race)

    async def results(self, pid: str, limit: int = 20) -> list[dict[str, Any]]:
        return [row for _, row in await history(self.client, pid, limit)]

    async def leaderboard(self, game: str, min_races: int, max_deviation: float,
                          limit: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        start = 0
        while len(out) < limit:
            ids = await self.client.zrevrange(board_key(game), start, start + 4 * limit - 1)
            if not ids:
                break
            start += len(ids)
            async with self.client.pipeline(transaction=False) as pipe:
                for pid in ids:
                    pipe.hget(ratings_key(text(pid)), game)
                    pipe.hget(player_key(text(pid)), "name")
                got = await pipe.execute()
            for i, pid in enumerate(ids):
                packed, name = got[2 * i], got[2 * i + 1]
                if packed is None or name is None:
                    continue
                r = unpack_rating(packed)
                if r.races >= min_races and r.sigma <= max_deviation:
                    out.append({"id": text(pid), "name": text(name), "rating": round(r.mu),
                                "deviation": round(r.sigma), "races": r.races})
        return out[:limit]

    # --------------------------------------------------------------------- daily
    async def daily(self, game: str, day: str) -> tuple[int, str] | None:
        value = await self.client.get(pkey(f"daily:{game}:{day}"))
        if value is None:
            return None
        seed, salt = text(value).split(" ")
        return int(seed), salt

    async def put_daily(self, game: str, day: str, seed: int, salt: str) -> tuple[int, str]:
        # One value, set if absent: whoever comes second reads the first one's deal.
        await self.client.set(pkey(f"daily:{game}:{day}"), f"{seed} {salt}", nx=True)
        kept = await self.daily(game, day)
        assert kept is not None
        return kept

    async def daily_attempt(self, game: str, day: str, pid: str, race: str, net: str = "",
                            at: int = 0) -> str:
        k = pkey(f"att:{game}:{day}")
        await self.client.hsetnx(k, pid, race)
        # The first look is kept (a second tab does not move it later).
        await self.client.hsetnx(pkey(f"look:{game}:{day}"), pid, f"{net} {at}")
        return text(await self.client.hget(k, pid))

    async def daily_lookers(self, game: str, day: str) -> list[dict[str, Any]]:
        looks = await self.client.hgetall(pkey(f"look:{game}:{day}"))
        out = []
        for pid, value in looks.items():
            net, at = text(value).split(" ")
            out.append({"player": text(pid), "net": net, "at": int(at)})
        return out

    async def daily_results(self, game: str, day: str) -> list[dict[str, Any]]:
        return [unpack_row(raw) for raw in await self.client.hvals(day_results_key(game, day))]

    async def days_played(self, pid: str, game: str, limit: int = 400) -> list[str]:
        days = await self.client.smembers(days_key(pid, game))
        return sorted((text(d) for d in days), reverse=True)[:limit]
