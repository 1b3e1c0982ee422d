"""Replays: every board a racer saw, after each of his actions, as the ``GET
/api/races/{race}/replay/{player}`` body.

A replay of a long race is a lot of work for Python (a 10,000-action race is 10,001 boards,
megabytes of JSON before gzip): built in a thread it would hold the interpreter's lock for
seconds and every other client's ping would wait. So :class:`Builder` builds them in a process
of its own (spawned, niced: the race server's loop comes first), one at a time, from plain data
— the game, the seed and the actions — and the same replay asked for twice at once is built
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import multiprocessing
import multiprocessing.connection
import os
import sqlite3
import threading
import urllib.parse
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import solrules

from solrace.core.race import Race


def replay(race: Race, player: str) -> dict[str, Any]:
    """A racer's replay as a message (blocking: see :class:`Builder`)."""
    return build(*_job(race, player))


def build(game_name: str, seed: int, meta: dict[str, Any], actions: list[str],
          times: list[int]) -> dict[str, Any]:
    game = solrules.new_game(game_name, seed)
    deal = game.position()  # every card, face-down ones too: replays come after the reveal
    boards = [game.board()]
    for action in actions:
        if action == "undo":
            game.pop()
        else:
            game.push(solrules.Move.from_text(action))
        boards.append(game.board())
    return {**meta, "deal": deal, "moves": actions, "times": times, "boards": boards}


def encoded(game_name: str, seed: int, meta: dict[str, Any], actions: list[str],
            times: list[int], gzip_ok: bool) -> bytes:
    """:func:`build`, as the response body (run in the builder's process)."""
    data = json.dumps(build(game_name, seed, meta, actions, times),
                      separators=(",", ":")).encode()
    return gzip.compress(data, 5) if gzip_ok else data


def encoded_from_file(path: str, race_id: str, player: str, now: int, gzip_ok: bool
                      ) -> tuple[int, bytes | None]:
    """A replay read straight from the SQLite file (run in the builder's process, for a race
    the server does not hold: rebuilding a long race is as much work as its replay).
    ``(200, body)``, ``(404, None)`` (no such race or racer) or ``(403, None)`` (the deal is
    not revealed yet)."""
    from solrace.store.sqlite_schema import COLUMNS, build_race

    db = sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=ro", uri=True)
    try:
        db.execute("PRAGMA busy_timeout=10000")
        row = db.execute(f"SELECT {COLUMNS} FROM races WHERE race = ?", (race_id,)).fetchone()
        if row is None:
            return 404, None
        race, _ = build_race(db, row)
    finally:
        db.close()
    if player not in race.racers:
        return 404, None
    race.deal.release(now)
    if not race.revealed:
        return 403, None
    return 200, encoded(*_job(race, player), gzip_ok)


def _job(race: Race, player: str) -> tuple[str, int, dict[str, Any], list[str], list[int]]:
    racer = race.racers[player]
    meta = {"race": race.race, "player": player, "name": racer.name, "bot": racer.bot}
    times = [t - (race.started_at or 0) for t in racer.times]
    return race.game, race.seed, meta, list(racer.actions), times


def _start_builder() -> None:
    """The builder's process, as it starts: a lower priority, and a thread that ends it when
    the server's process is gone. A killed server (``kill -9``, the OOM killer) closes no pipe
    the builder reads from (a spawned worker holds both ends of its job queue), so without it
    the builder, and multiprocessing's resource tracker with it, would wait forever."""
    with contextlib.suppress(OSError):  # not allowed here: same priority, off the loop
        os.nice(10)
    parent = multiprocessing.parent_process()
    if parent is not None:
        def exit_with_parent() -> None:
            multiprocessing.connection.wait([parent.sentinel])
            os._exit(0)

        threading.Thread(target=exit_with_parent, name="exit with the server",
                         daemon=True).start()


class Builder:
    """Builds replay bodies in one spawned, niced process (started on first use)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._building: dict[tuple[str, str, bool], asyncio.Future[Any]] = {}

    async def body(self, race: Race, player: str, gzip_ok: bool) -> bytes:
        """The body of a replay of a race held in memory."""
        body: bytes = await self._once((race.race, player, gzip_ok), encoded,
                                       *_job(race, player), gzip_ok)
        return body

    async def from_file(self, path: str, race_id: str, player: str, now: int, gzip_ok: bool
                        ) -> tuple[int, bytes | None]:
        """The replay of a race not in memory, read from the SQLite file at ``path``
        (:func:`encoded_from_file`)."""
        got: tuple[int, bytes | None] = await self._once(
            (race_id, player, gzip_ok), encoded_from_file, path, race_id, player, now, gzip_ok)
        return got

    async def _once(self, key: tuple[str, str, bool], fn: Any, *args: Any) -> Any:
        fut = self._building.get(key)
        if fut is None:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_builder)
            loop = asyncio.get_running_loop()
            fut = asyncio.ensure_future(loop.run_in_executor(self._pool, fn, *args))
            self._building[key] = fut
            fut.add_done_callback(lambda _: self._building.pop(key, None))
        return await asyncio.shield(fut)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
