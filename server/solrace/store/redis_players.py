"""Players in Redis (:class:`~solrace.store.player_base.PlayerStore`), shared by every process.

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
    sr:{pl}:res:ID          list: the player's results, newest first (msgpack maps; capped)
    sr:{pl}:lb:GAME         sorted set: rated players of GAME by mu
    sr:{pl}:scored          hash: race -> the ``ratings`` body (JSON) of every scored race
    sr:{pl}:toscore         set: races a player joined, not scored yet
    sr:{pl}:daily:GAME:DAY  "seed salt" of the day's deal (SET NX: the first one drawn)
    sr:{pl}:att:GAME:DAY    hash: player id -> his attempt's race
    sr:{pl}:dres:GAME:DAY   list: the day's results (msgpack maps)
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

Scoring reads the counted players' ratings, works out the new ones here, and writes them with
the results in one script that first checks that the race is not scored yet and that every
rating it read is still as it was (its race count); if one changed meanwhile (another race of
the same player scored by another process) nothing is written and the scorer reads again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import msgpack
from redis.exceptions import NoScriptError, ResponseError

from solrace.cluster.connect import TO_SCORE, RedisClient
from solrace.core.identity import Player, name_key, own_key
from solrace.core.names import VERSION as NAMES_VERSION
from solrace.core.rating import Rating
from solrace.core.scoring import Result, Scoring, changes, new_ratings, with_ratings
from solrace.settings import KNOWN_NETWORK_DAYS, KNOWN_NETWORKS, SIGN_IN_FORGET_S
from solrace.store.player_base import STATS_RESULTS

log = logging.getLogger(__name__)


def pkey(name: str) -> str:
    return f"sr:{{pl}}:{name}"


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

#: KEYS[1]: scored hash, KEYS[2]: toscore set, then the data keys. ARGV: race, body, then
#: operations: 'C' key# game races (the rating must have this race count, -1: none),
#: 'R' key# game packed (HSET), 'Z' key# score member (ZADD), 'L' key# packed cap (LPUSH and
#: LTRIM to cap; cap 0: RPUSH, no trim), 'S' key# member (SADD). 1, 0 if already scored, or
#: the error CONFLICT.
SCORE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local i = 3
while i <= #ARGV do
  if ARGV[i] == 'C' then
    local cur = redis.call('HGET', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    local races = -1
    if cur then races = cmsgpack.unpack(cur)[3] end
    if races ~= tonumber(ARGV[i + 3]) then return redis.error_reply('CONFLICT') end
    i = i + 4
  elseif ARGV[i] == 'S' then i = i + 3
  else i = i + 4 end
end
i = 3
while i <= #ARGV do
  local op, k = ARGV[i], KEYS[tonumber(ARGV[i + 1])]
  if op == 'R' then
    redis.call('HSET', k, ARGV[i + 2], ARGV[i + 3]); i = i + 4
  elseif op == 'Z' then
    redis.call('ZADD', k, ARGV[i + 2], ARGV[i + 3]); i = i + 4
  elseif op == 'L' then
    local cap = tonumber(ARGV[i + 3])
    if cap > 0 then
      redis.call('LPUSH', k, ARGV[i + 2]); redis.call('LTRIM', k, 0, cap - 1)
    else
      redis.call('RPUSH', k, ARGV[i + 2])
    end
    i = i + 4
  elseif op == 'S' then
    redis.call('SADD', k, ARGV[i + 2]); i = i + 3
  else i = i + 4 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
"""

#: KEYS[1]: ticket. The player's id, and the ticket deleted; nil if there is none.
TAKE_TICKET = """
local pid = redis.call('GET', KEYS[1])
if pid then redis.call('DEL', KEYS[1]) end
return pid
"""

#: How many times scoring reads again after a conflict before it gives up for now (the sweep
#: comes back to the race).
SCORE_TRIES = 8


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Ops:
    """A SCORE script's keys and operations."""

    def __init__(self) -> None:
        self.keys = [pkey("scored"), TO_SCORE]
        self.args: list[Any] = []

    def k(self, name: str) -> int:
        if name not in self.keys:
            self.keys.append(name)
        return self.keys.index(name) + 1


class RedisPlayers:
    """See the module docstring."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._sha: dict[str, str] = {}
        self._indexed = False
        self._indexing = asyncio.Lock()

    async def _script(self, name: str, body: str, keys: list[str], args: list[Any]) -> Any:
        sha = self._sha.get(name)
        if sha is None:
            sha = self._sha[name] = await self.client.script_load(body)
        try:
            return await self.client.evalsha(sha, len(keys), *keys, *args)
        except NoScriptError:  # Redis restarted without its script cache
            self._sha[name] = await self.client.script_load(body)
            return await self.client.evalsha(self._sha[name], len(keys), *keys, *args)

    async def _player(self, pid: str | None) -> Player | None:
        if pid is None:
            return None
        fields = await self.client.hgetall(pkey(f"p:{pid}"))
        if not fields:
            return None
        f = {_text(k): _text(v) for k, v in fields.items()}
        return Player(pid, f["name"], int(f["created_at"]), f.get("password") or None)

    async def _get(self, name: str) -> str | None:
        value = await self.client.get(pkey(name))
        return None if value is None else _text(value)

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
                    players.append((int(created), k.rsplit(":", 1)[1], _text(name)))
            batch.clear()

        async for k in self.client.scan_iter(match=pkey("p:*"), count=1000, _type="HASH"):
            batch.append(_text(k))
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
            "create", CREATE,
            [pkey(NAME_INDEX + key), pkey(f"p:{player.id}"), pkey(f"key:{key_hash}")],
            [player.id, player.name, player.created_at, key])
        return bool(done)

    async def rename(self, pid: str, name: str) -> bool:
        await self._names()
        fields = await self.client.hmget(pkey(f"p:{pid}"), "name", "nk")
        if fields[0] is None:
            return False
        old = _text(fields[1]) if fields[1] is not None else name_key(_text(fields[0]))
        key = name_key(name)
        if old == own_key(key, pid):
            key = old  # his own name, kept under a key of his own (index_names)
        done = await self._script(
            "rename", RENAME,
            [pkey(NAME_INDEX + key), pkey(NAME_INDEX + old), pkey(f"p:{pid}")],
            [pid, name, key])
        return bool(done)

    async def set_password(self, pid: str, record: str) -> None:
        await self.client.hset(pkey(f"p:{pid}"), "password", record)

    async def add_key(self, pid: str, key_hash: str, now: int) -> None:
        await self.client.set(pkey(f"key:{key_hash}"), pid)

    async def drop_key(self, key_hash: str) -> None:
        await self.client.delete(pkey(f"key:{key_hash}"))

    async def put_ticket(self, ticket_hash: str, pid: str, expires_at: int) -> None:
        # The expiry is checked against the server's clock; Redis only clears old ones.
        await self.client.set(pkey(f"t:{ticket_hash}"), f"{pid} {expires_at}", ex=3600)

    async def take_ticket(self, ticket_hash: str, now: int) -> str | None:
        value = await self._script("take_ticket", TAKE_TICKET, [pkey(f"t:{ticket_hash}")], [])
        if value is None:
            return None
        pid, expires = _text(value).split(" ")
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
        done = await self._script("take_account", TAKE_ACCOUNT, [pkey(f"acct:{day}:{tag}")],
                                  [cap, 2 * 86_400])
        return bool(done)

    # ------------------------------------------------------------------- ratings
    async def ratings(self, pid: str) -> dict[str, Rating]:
        fields = await self.client.hgetall(pkey(f"r:{pid}"))
        out = {}
        for game, packed in fields.items():
            mu, sigma, races = msgpack.unpackb(packed)
            out[_text(game)] = Rating(mu, sigma, races)
        return out

    async def score(self, s: Scoring) -> dict[str, Any] | None:
        for _ in range(SCORE_TRIES):
            if await self.client.hexists(pkey("scored"), s.race):
                return None
            players = [key for key, _ in s.counted if not key.startswith("bot:")] if s.rated \
                else []
            current: dict[str, Rating] = {}
            ops = _Ops()
            for pid in players:
                packed = await self.client.hget(pkey(f"r:{pid}"), s.game)
                races = -1
                if packed is not None:
                    mu, sigma, races = msgpack.unpackb(packed)
                    current[pid] = Rating(mu, sigma, races)
                ops.args += ["C", ops.k(pkey(f"r:{pid}")), s.game, races]
            results: list[Result] = s.results
            moves: list[dict[str, Any]] = []
            if s.rated:
                new = new_ratings(s, current)
                moves = changes(s, current, new)
                results = with_ratings(s, current, new)
                for pid in players:
                    r = new[pid]
                    ops.args += ["R", ops.k(pkey(f"r:{pid}")), s.game,
                                 msgpack.packb([r.mu, r.sigma, r.races])]
                    ops.args += ["Z", ops.k(pkey(f"lb:{s.game}")), r.mu, pid]
            for res in results:
                packed_res = msgpack.packb(res.as_dict())
                ops.args += ["L", ops.k(pkey(f"res:{res.player}")), packed_res, STATS_RESULTS]
                if res.kind == "daily" and res.day is not None:
                    ops.args += ["L", ops.k(pkey(f"dres:{res.game}:{res.day}")), packed_res, 0]
                    ops.args += ["S", ops.k(pkey(f"days:{res.player}:{res.game}")), res.day]
            body = {"rated": s.rated, "game": s.game, "changes": moves}
            try:
                done = await self._script("score", SCORE, ops.keys,
                                          [s.race, json.dumps(body), *ops.args])
            except ResponseError as exc:
                if "CONFLICT" in str(exc):
                    continue
                raise
            return body if done else None
        raise RuntimeError(f"race {s.race}: ratings kept changing while it was scored")

    async def scored(self, race: str) -> dict[str, Any] | None:
        body = await self.client.hget(pkey("scored"), race)
        return None if body is None else dict(json.loads(body))

    async def to_score(self, limit: int) -> list[str]:
        members = await self.client.srandmember(TO_SCORE, limit) or []
        return [_text(m) for m in members]

    async def done_scoring(self, race: str) -> None:
        await self.client.srem(TO_SCORE, race)

    async def results(self, pid: str, limit: int = 20) -> list[dict[str, Any]]:
        raw = await self.client.lrange(pkey(f"res:{pid}"), 0, limit - 1)
        return [msgpack.unpackb(r, raw=False) for r in raw]

    async def leaderboard(self, game: str, min_races: int, max_deviation: float,
                          limit: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        start = 0
        while len(out) < limit:
            ids = await self.client.zrevrange(pkey(f"lb:{game}"), start, start + 4 * limit - 1)
            if not ids:
                break
            start += len(ids)
            async with self.client.pipeline(transaction=False) as pipe:
                for pid in ids:
                    pipe.hget(pkey(f"r:{_text(pid)}"), game)
                    pipe.hget(pkey(f"p:{_text(pid)}"), "name")
                got = await pipe.execute()
            for i, pid in enumerate(ids):
                packed, name = got[2 * i], got[2 * i + 1]
                if packed is None or name is None:
                    continue
                mu, sigma, races = msgpack.unpackb(packed)
                if races >= min_races and sigma <= max_deviation:
                    out.append({"id": _text(pid), "name": _text(name), "rating": round(mu),
                                "deviation": round(sigma), "races": races})
        return out[:limit]

    # --------------------------------------------------------------------- daily
    async def daily(self, game: str, day: str) -> tuple[int, str] | None:
        value = await self.client.get(pkey(f"daily:{game}:{day}"))
        if value is None:
            return None
        seed, salt = _text(value).split(" ")
        return int(seed), salt

    async def put_daily(self, game: str, day: str, seed: int, salt: str) -> tuple[int, str]:
        # One value, set if absent: whoever comes second reads the first one's deal.
        await self.client.set(pkey(f"daily:{game}:{day}"), f"{seed} {salt}", nx=True)
        kept = await self.daily(game, day)
        assert kept is not None
        return kept

    async def daily_attempt(self, game: str, day: str, pid: str, race: str) -> str:
        k = pkey(f"att:{game}:{day}")
        await self.client.hsetnx(k, pid, race)
        return _text(await self.client.hget(k, pid))

    async def daily_results(self, game: str, day: str) -> list[dict[str, Any]]:
        raw = await self.client.lrange(pkey(f"dres:{game}:{day}"), 0, -1)
        return [msgpack.unpackb(r, raw=False) for r in raw]

    async def days_played(self, pid: str, game: str, limit: int = 400) -> list[str]:
        days = await self.client.smembers(pkey(f"days:{pid}:{game}"))
        return sorted((_text(d) for d in days), reverse=True)[:limit]
