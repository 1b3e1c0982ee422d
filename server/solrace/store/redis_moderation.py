"""Fair play in Redis (:class:`~solrace.store.moderation_base.ModerationStore`), shared by every
process, in the players' keys (:mod:`solrace.store.redis_player_data`: roles, closures, refunds,
the flagged set and the held races, next to the results and ratings they change).

A clear and a close each read what they need, work the change out here (a held race's ratings
with :func:`~solrace.core.scoring.rate_held` from the ratings as they are now, the refunds) and
write it in one ``APPLY`` that checks that everything they read is still as it was: a result, a
held race, a rating, a refund not given yet, the closed player's latest result. If anything
changed meanwhile (a score, another clear, another close, from any process), nothing is written
and they read again. So two moderators clearing the two flagged results of one race at once
apply its ratings exactly once (the second one's script sees the first one's clear), and a
refund is given once however many closes run.

A close works from the player's history as Redis keeps it (his latest ``STATS_RESULTS``
results): the races before those are not refunded (SQLite keeps every result and refunds them).
"""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any

import msgpack

from solrace.core.fairplay import suspicion_of
from solrace.core.rating import Rating
from solrace.core.scoring import rate_held
from solrace.runtime.redis_connect import RedisClient
from solrace.settings import REPEAT_WINDOW_MS
from solrace.store.player_base import STATS_RESULTS
from solrace.store.redis_player_data import (
    CLOSURES,
    FLAGGED,
    HELD,
    REFUNDS,
    ROLES,
    SCORED,
    Conflict,
    Ops,
    Scripts,
    board_key,
    data,
    day_results_key,
    history,
    history_key,
    of,
    pack_rating,
    pack_row,
    pair_key,
    player_key,
    rated_row,
    ratings_key,
    results_key,
    stored_ratings,
    stored_results,
    text,
    unpack_rating,
    unpack_row,
)
from solrace.store.redis_players import SCORE_TRIES

Row = dict[str, Any]


def _people(entries: list[list[Any]]) -> list[str]:
    """The players (not house bots) among a held race's counted racers."""
    return [str(e[0]) for e in entries if not str(e[0]).startswith("bot:")]


class RedisModeration:
    """See the module docstring."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self.scripts = Scripts(client)

    # --------------------------------------------------------------------- roles
    async def set_role(self, pid: str, role: str | None) -> None:
        if role is None:
            await self.client.hdel(ROLES, pid)
        else:
            await self.client.hset(ROLES, pid, role)

    async def role(self, pid: str) -> str | None:
        value = await self.client.hget(ROLES, pid)
        return None if value is None else text(value)

    async def roles(self) -> list[tuple[str, str]]:
        got = await self.client.hgetall(ROLES)
        return sorted((text(p), text(r)) for p, r in got.items())

    # ------------------------------------------------------------------- flagged
    async def flagged(self, limit: int) -> list[Row]:
        out: list[Row] = []
        start, step = 0, 2 * limit
        while len(out) < limit:
            members = await self.client.zrevrange(FLAGGED, start, start + step - 1)
            if not members:
                break
            start += len(members)
            refs = [tuple(text(m).split("|", 1)) for m in members]
            pids = sorted({pid for _, pid in refs})
            async with self.client.pipeline(transaction=False) as pipe:
                for race, pid in refs:
                    pipe.hget(results_key(pid), race)
                for pid in pids:
                    pipe.hget(player_key(pid), "name")
                pipe.hmget(CLOSURES, pids)
                got = await pipe.execute()
            names = dict(zip(pids, got[len(refs):-1], strict=True))
            closed = {pid for pid, c in zip(pids, got[-1], strict=True) if c is not None}
            for (_, pid), raw in zip(refs, got[:len(refs)], strict=True):
                if raw is None or pid in closed:
                    continue
                row = unpack_row(raw)
                if row["flagged"] and not row["cleared"]:
                    row["player_name"] = None if names[pid] is None else text(names[pid])
                    out.append(row)
        out.sort(key=lambda r: (-suspicion_of(r.get("signals")), -int(r["at"])))
        return out[:limit]

    # --------------------------------------------------------------------- clear
    async def clear(self, race: str, pid: str, by: str | None, now: int) -> Row | None:
        for _ in range(SCORE_TRIES):
            try:
                return await self._clear(race, pid, now)
            except Conflict:
                continue
        raise RuntimeError(f"race {race}: kept changing while {pid}'s result was cleared")

    async def _clear(self, race: str, pid: str, now: int) -> Row | None:
        raw = await self.client.hget(results_key(pid), race)
        if raw is None:
            return None
        mine = unpack_row(raw)
        if not mine["flagged"] or mine["cleared"]:
            return None
        ops = Ops()
        ops.same(results_key(pid), race, data(raw))
        rows: dict[str, Row] = {pid: {**mine, "cleared": True}}  # the results to write
        ratings = None
        held = await self.client.hget(HELD, race)
        ops.same(HELD, race, None if held is None else data(held))
        if held is not None:
            game, entries = msgpack.unpackb(held, raw=False)
            people = _people(entries)
            others = [p for p in people if p != pid]
            # Every counted result as it is now: another moderator's clear of one of them
            # changes it, and then this script writes nothing and this reads again.
            for p, stored in zip(others, await stored_results(
                    self.client, [(p, race) for p in others]), strict=True):
                ops.same(results_key(p), race, stored)
                if stored is not None:
                    rows[p] = unpack_row(stored)
            if not any(r["held"] and r["flagged"] and not r["cleared"] for r in rows.values()):
                ratings = await self._apply_held(ops, race, str(game), entries, rows, now)
            else:
                rows = {pid: rows[pid]}  # only his result changes
        for p, row in rows.items():
            packed = pack_row(row)
            ops.hset(results_key(p), race, packed)
            if row.get("kind") == "daily" and row.get("day") is not None:
                ops.hset(day_results_key(row["game"], row["day"]), of(race, p), packed)
        ops.zrem(FLAGGED, of(race, pid))
        await self.scripts.apply(ops)
        return {"race": race, "player": pid, "ratings": ratings}

    async def _apply_held(self, ops: Ops, race: str, game: str, entries: list[list[Any]],
                          rows: dict[str, Row], now: int) -> Row:
        """Queue the writes of a held race's ratings, worked out from the ratings as they are
        now (checked unchanged when written); ``rows`` get their ratings. The new ``ratings``
        body."""
        people = _people(entries)
        current: dict[str, Rating] = {}
        for p, stored in zip(people, await stored_ratings(
                self.client, [(p, game) for p in people]), strict=True):
            ops.same(ratings_key(p), game, stored)
            if stored is not None:
                current[p] = unpack_rating(stored)
        new, moves = rate_held(entries, current)
        for p in people:
            ops.hset(ratings_key(p), game, pack_rating(new[p]))
            ops.zadd(board_key(game), new[p].mu, p, unless_in=CLOSURES)
            if p in rows:
                rows[p] = rated_row(rows[p], current.get(p, Rating()), new[p])
        at = int(next(iter(rows.values()))["at"])
        for a, b in combinations(sorted(people), 2):  # rated together now
            ops.recent(pair_key(a, b), at, race, REPEAT_WINDOW_MS, now)
        body = {"rated": True, "game": game, "changes": moves}
        ops.hset(SCORED, race, json.dumps(body))
        ops.hdel(HELD, race)
        return body

    # --------------------------------------------------------------------- close
    async def close(self, pid: str, by: str | None, reason: str, now: int) -> Row:
        for _ in range(SCORE_TRIES):
            try:
                return await self._close(pid, by, reason, now)
            except Conflict:
                continue
        raise RuntimeError(f"{pid}'s records kept changing while the account was closed")

    async def _close(self, pid: str, by: str | None, reason: str, now: int) -> Row:
        closure = await self.client.hget(CLOSURES, pid)
        newest = await self.client.lindex(history_key(pid), 0)
        rows = [row for _, row in await history(self.client, pid, STATS_RESULTS)]
        ops = Ops()
        ops.same(CLOSURES, pid, None if closure is None else data(closure))
        # A result scored after this read (a rating or a held race more) means: read again.
        ops.head(history_key(pid), None if newest is None else data(newest))
        if closure is None:
            ops.hset(CLOSURES, pid, msgpack.packb([now, by, reason]))
        refunds = await self._refunds(ops, pid, [r for r in rows if r["rated"]], now)
        dropped = await self._drop_held(ops, [r["race"] for r in rows if r["held"]])
        for game in await self.client.hkeys(ratings_key(pid)):
            ops.zrem(board_key(text(game)), pid)
        for row in rows:
            if row["flagged"] and not row["cleared"]:
                ops.zrem(FLAGGED, of(row["race"], pid))
        await self.scripts.apply(ops)
        return {"closed": closure is None, "refunds": refunds, "dropped": dropped}

    async def _refunds(self, ops: Ops, pid: str, rated: list[Row], now: int) -> list[Row]:
        """Queue the refunds of the rating points every opponent lost to ``pid`` in his rated
        races (``rated``), each race and opponent once; the refunds."""
        races = [str(r["race"]) for r in rated]
        owed: list[Row] = []
        for race, raw in zip(races, await self.client.hmget(SCORED, races) if races else [],
                             strict=True):
            body = {} if raw is None else json.loads(raw)
            for change in body.get("changes", []):
                other = change.get("id")
                if other and other != pid and change["after"] < change["before"]:
                    owed.append({"race": race, "player": other, "game": body["game"],
                                 "points": int(change["before"]) - int(change["after"])})
        if not owed:
            return []
        given = await self.client.hmget(REFUNDS, [of(o["race"], o["player"]) for o in owed])
        owed = [o for o, g in zip(owed, given, strict=True) if g is None]
        totals: dict[tuple[str, str], int] = {}
        for o in owed:
            ops.same(REFUNDS, of(o["race"], o["player"]), None)  # not given meanwhile
            ops.hset(REFUNDS, of(o["race"], o["player"]), msgpack.packb([o["points"], now]))
            key = (o["player"], o["game"])
            totals[key] = totals.get(key, 0) + o["points"]
        wanted = list(totals)
        for (other, game), stored in zip(wanted, await stored_ratings(self.client, wanted),
                                         strict=True):
            ops.same(ratings_key(other), game, stored)
            if stored is None:  # no rating to give back to (cannot happen: he lost points)
                continue
            r = unpack_rating(stored)
            back = Rating(r.mu + totals[(other, game)], r.sigma, r.races)
            ops.hset(ratings_key(other), game, pack_rating(back))
            ops.zadd(board_key(game), back.mu, other, unless_in=CLOSURES)
        return owed

    async def _drop_held(self, ops: Ops, races: list[str]) -> list[str]:
        """Queue the dropping of these held races (they count for nobody: casual,
        ``closed``); the races dropped."""
        if not races:
            return []
        held = await self.client.hmget(HELD, races)
        bodies = await self.client.hmget(SCORED, races)
        dropped = []
        for race, raw, body_raw in zip(races, held, bodies, strict=True):
            if raw is None:  # cleared or dropped already
                continue
            ops.same(HELD, race, data(raw))
            ops.same(SCORED, race, None if body_raw is None else data(body_raw))
            people = _people(msgpack.unpackb(raw, raw=False)[1])
            for p, stored in zip(people, await stored_results(
                    self.client, [(p, race) for p in people]), strict=True):
                ops.same(results_key(p), race, stored)
                if stored is not None and unpack_row(stored)["held"]:
                    row = {**unpack_row(stored), "held": False, "casual": "closed"}
                    ops.hset(results_key(p), race, pack_row(row))
            body: Row = {"rated": False, "game": None, "changes": [], "casual": "closed"}
            if body_raw is not None:
                body = {**json.loads(body_raw), "rated": False, "changes": [],
                        "casual": "closed"}
                body.pop("held", None)
            ops.hset(SCORED, race, json.dumps(body))
            ops.hdel(HELD, race)
            dropped.append(race)
        return dropped

    # ------------------------------------------------------------------- reading
    async def closed(self, pids: list[str]) -> set[str]:
        if not pids:
            return set()
        got = await self.client.hmget(CLOSURES, pids)
        return {pid for pid, c in zip(pids, got, strict=True) if c is not None}

    async def closure(self, pid: str) -> Row | None:
        raw = await self.client.hget(CLOSURES, pid)
        if raw is None:
            return None
        at, _, reason = msgpack.unpackb(raw, raw=False)
        return {"at": int(at), "reason": str(reason)}
