"""Players in Redis (:class:`~solrace.store.player_base.PlayerStore`), shared by every process.
The keys, the stored form of a result and the script every score goes through are in
:mod:`solrace.store.redis_player_data`.

Scoring reads the counted players' ratings (and, when one is written for the first time, that
it is absent), works out the new ones here, and writes everything a score writes — results,
ratings, leaderboard, a held race's rating inputs, the flagged set, the history of rated pairs,
walkouts, the daily table, and the mark that the race is scored — in one ``APPLY`` that first
checks that the race is not scored yet and that every rating it read is still as it was; if one
changed meanwhile (another race of the same player scored, a clear or a refund, by any process)
nothing is written and the scorer reads again.
"""

from __future__ import annotations

import json
from typing import Any, cast

import msgpack

from solrace.cluster.connect import TO_SCORE, RedisClient
from solrace.core.fairplay import suspicion_of
from solrace.core.identity import Player, name_key
from solrace.core.rating import Rating
from solrace.core.scoring import Result, Scoring, changes, held_entries, new_ratings, with_ratings
from solrace.settings import REPEAT_WINDOW_MS, WALKOUT_WINDOW_MS
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

#: KEYS: name key, player hash, key key. ARGV: id, name, created_at. 1, or 0 if the name is
#: taken.
CREATE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
redis.call('HSET', KEYS[2], 'name', ARGV[2], 'created_at', ARGV[3])
redis.call('SET', KEYS[3], ARGV[1])
return 1
"""

#: KEYS: new name key, old name key, player hash. ARGV: id, name. 1, or 0 if taken.
RENAME = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return 0 end
if KEYS[2] ~= KEYS[1] then redis.call('DEL', KEYS[2]) end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[3], 'name', ARGV[2])
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
    async def by_key(self, key_hash: str) -> Player | None:
        return await self._player(await self._get(f"key:{key_hash}"))

    async def by_name(self, name: str) -> Player | None:
        return await self._player(await self._get(f"name:{name_key(name)}"))

    async def by_id(self, pid: str) -> Player | None:
        return await self._player(pid)

    async def create(self, player: Player, key_hash: str) -> bool:
        done = await self._script(
            CREATE,
            [pkey(f"name:{name_key(player.name)}"), player_key(player.id),
             pkey(f"key:{key_hash}")], [player.id, player.name, player.created_at])
        return bool(done)

    async def rename(self, pid: str, name: str) -> bool:
        current = await self._player(pid)
        if current is None:
            return False
        done = await self._script(
            RENAME,
            [pkey(f"name:{name_key(name)}"), pkey(f"name:{name_key(current.name)}"),
             player_key(pid)], [pid, name])
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

    async def daily_attempt(self, game: str, day: str, pid: str, race: str) -> str:
        k = pkey(f"att:{game}:{day}")
        await self.client.hsetnx(k, pid, race)
        return text(await self.client.hget(k, pid))

    async def daily_results(self, game: str, day: str) -> list[dict[str, Any]]:
        return [unpack_row(raw) for raw in await self.client.hvals(day_results_key(game, day))]

    async def days_played(self, pid: str, game: str, limit: int = 400) -> list[str]:
        days = await self.client.smembers(days_key(pid, game))
        return sorted((text(d) for d in days), reverse=True)[:limit]
