"""The SQLite store's schema and rows: the tables, the columns added since the first schema,
and how a race or a tournament is written as a row and rebuilt from its row and log."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from typing import Any

from solrace.core.race import LogEntry, Options, Race
from solrace.core.tournament import Settings, TLogEntry, Tournament
from solrace.protocol.codec import encode_json

log = logging.getLogger("solrace.store.sqlite_store")


def create_private(path: str) -> None:
    """Create the database file readable by its owner only (it holds racer tokens and secret
    seeds); SQLite gives its -wal and -shm files the same mode."""
    if path != ":memory:" and not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def dumps(data: Any) -> str:
    """A log entry's data as JSON text."""
    return encode_json(data).decode()

SCHEMA = """
CREATE TABLE IF NOT EXISTS races (
    race TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    seed TEXT NOT NULL,
    salt TEXT NOT NULL,
    players INTEGER NOT NULL,
    time_limit INTEGER NOT NULL,
    undo INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    host_token TEXT NOT NULL,
    countdown_ms INTEGER NOT NULL,
    finished_at INTEGER,
    seed_chosen INTEGER NOT NULL DEFAULT 0,
    public INTEGER NOT NULL DEFAULT 0,
    seated_until INTEGER,
    forfeit INTEGER NOT NULL DEFAULT 0,
    hints INTEGER NOT NULL DEFAULT 0,
    winnable INTEGER NOT NULL DEFAULT 0,
    demo_catalogue INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS log (
    race TEXT NOT NULL,
    n INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    player TEXT,
    data TEXT,
    PRIMARY KEY (race, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY,
    race TEXT NOT NULL,
    n INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    player TEXT,
    data TEXT
);
CREATE INDEX IF NOT EXISTS races_unfinished ON races (finished_at) WHERE finished_at IS NULL;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS tournaments (
    tournament TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    host_token TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE TABLE IF NOT EXISTS pool (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    seed TEXT NOT NULL,
    moves INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS pool_game ON pool (game, id);
CREATE TABLE IF NOT EXISTS tlog (
    tournament TEXT NOT NULL,
    n INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT,
    PRIMARY KEY (tournament, n)
) WITHOUT ROWID;
"""

COLUMNS = ("race, game, seed, salt, players, time_limit, undo, created_at, host_token, "
           "countdown_ms, finished_at, seed_chosen, public, seated_until, forfeit, hints, "
           "winnable, demo_catalogue")

INSERT_RACE = ("INSERT INTO races (race, game, seed, salt, players, time_limit, undo, "
               "created_at, host_token, countdown_ms, seed_chosen, public, seated_until, "
               "forfeit, hints, winnable, demo_catalogue) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")

#: Columns added since the first schema, for databases made before them.
MIGRATIONS = {
    "seed_chosen": "ALTER TABLE races ADD COLUMN seed_chosen INTEGER NOT NULL DEFAULT 0",
    "public": "ALTER TABLE races ADD COLUMN public INTEGER NOT NULL DEFAULT 0",
    "seated_until": "ALTER TABLE races ADD COLUMN seated_until INTEGER",
    "forfeit": "ALTER TABLE races ADD COLUMN forfeit INTEGER NOT NULL DEFAULT 0",
    "hints": "ALTER TABLE races ADD COLUMN hints INTEGER NOT NULL DEFAULT 0",
    "winnable": "ALTER TABLE races ADD COLUMN winnable INTEGER NOT NULL DEFAULT 0",
    "demo_catalogue": "ALTER TABLE races ADD COLUMN demo_catalogue INTEGER NOT NULL DEFAULT 0",
}


def build_race(db: sqlite3.Connection, row: tuple[object, ...]) -> tuple[Race, int]:
    """Rebuild a race from its row (:data:`COLUMNS`) by replaying its log; also the number of
    log entries. An entry that cannot be applied (a damaged row) is logged and skipped: one
    bad row never loses a whole race."""
    (race_id, game, seed, salt, players, time_limit, undo, created_at, host, cd,
     finished_at, seed_chosen, public, seated_until, forfeit, hints, winnable, demo) = row
    race = Race(
        str(race_id),
        str(game),
        int(str(seed)),
        str(salt),
        Options(int(str(players)), int(str(time_limit)), bool(undo), bool(public),
                bool(hints), bool(winnable), bool(demo)),
        int(str(created_at)),
        str(host),
        countdown_ms=int(str(cd)),
        seed_chosen=bool(seed_chosen),
        seated_until=None if seated_until is None else int(str(seated_until)),
        forfeit=bool(forfeit),
    )
    n = 0
    for at, kind, player, data, n in db.execute(
        "SELECT at, kind, player, data, n FROM log WHERE race = ? UNION ALL "
        "SELECT at, kind, player, data, n FROM journal WHERE race = ? ORDER BY 5",
        (race_id, race_id),
    ):
        try:
            value = None if data is None else json.loads(data)
            race.replay(LogEntry(race.race, at, kind, player, value))
        except Exception as exc:
            log.warning("race %s: log entry %d skipped (%s: %s)", race_id, n, kind, exc)
        n += 1
    if finished_at is not None:
        race.tick(int(str(finished_at)))  # a race ended by its time limit has no log entry
    return race, n


def race_row(race: Race) -> tuple[object, ...]:
    """The values of :data:`INSERT_RACE` for a new race."""
    o = race.options
    return (race.race, race.game, str(race.seed), race.salt, o.players, o.time_limit,
            int(o.undo), race.created_at, race.host_token, race.countdown_ms,
            int(race.seed_chosen), int(o.public), race.seated_until, int(race.forfeit),
            int(o.hints), int(o.winnable), int(o.demo_catalogue))


def build_tournament(db: sqlite3.Connection, row: tuple[object, ...]) -> tuple[Tournament, int]:
    """Rebuild a tournament from its row and log; also the number of log entries."""
    tid, settings, host, created_at, _finished = row
    t = Tournament(str(tid), Settings.from_record(json.loads(str(settings))), str(host),
                   int(str(created_at)))
    n = 0
    for at, kind, data, n in db.execute(
            "SELECT at, kind, data, n FROM tlog WHERE tournament = ? ORDER BY n", (tid,)):
        try:
            t.replay(TLogEntry(t.tid, at, kind, None if data is None else json.loads(data)))
        except Exception as exc:
            log.warning("tournament %s: log entry %d skipped (%s)", tid, n, exc)
        n += 1
    return t, n
