"""A replay read straight from the SQLite file, for a race the server does not hold: rebuilding a
long race is as much work as its replay, so both are done in the builder's process
(:class:`solrace.runtime.builder.Builder`), not in the server's."""

from __future__ import annotations

import sqlite3
import urllib.parse

from solrace.protocol.replays import Job, encoded, plain
from solrace.store.sqlite_schema import COLUMNS, build_race


def encoded_from_file(path: str, race_id: str, player: str, now: int, gzip_ok: bool
                      ) -> tuple[int, bytes | None]:
    """``(200, body)``, ``(404, None)`` (no such race or racer) or ``(403, None)`` (the deal is
    not revealed yet). Runs in the builder's process."""
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
    return 200, encoded(*plain(race, player), gzip_ok)


def job(path: str, race_id: str, player: str, now: int, gzip_ok: bool) -> Job:
    """:func:`encoded_from_file` as a job for the builder's process (the same key as the job
    of the race held in memory: one build for both)."""
    return (race_id, player, gzip_ok), encoded_from_file, (path, race_id, player, now, gzip_ok)
