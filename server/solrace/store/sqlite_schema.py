"""The SQLite store's schema: its tables (the ``races`` table's columns are the race record's
fields, :data:`solrace.store.records.RACE_FIELDS`), the columns added since the first schema,
and how a row and a log read back become a race or a tournament (through
:mod:`solrace.store.records`, as the Redis store does)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from typing import Any

from solrace.core.race import Race
from solrace.core.race_parts import LogEntry
from solrace.core.tournament import TLogEntry
from solrace.core.units import Unit
from solrace.protocol.codec import encode_json
from solrace.store.records import (
    ADDED_FIELDS,
    RACE_FIELDS,
    race_from_record,
    race_record,
    replay,
    tournament_from_record,
)

log = logging.getLogger("solrace.store.sqlite_store")


def create_private(path: str) -> None:
    """Create the database file readable by its owner only (it holds racer tokens and secret
    seeds); SQLite gives its -wal and -shm files the same mode."""
    if path != ":memory:" and not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def dumps(data: Any) -> str:
    """A log entry's data as JSON text."""
    return encode_json(data).decode()


#: The private pool of winnable deals (solrace.solver.pool): each entry sealed by the pool,
#: opaque text here (a copy of the file tells no deal).
POOL_TABLE = """
CREATE TABLE IF NOT EXISTS pool (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pool_game ON pool (game, id);
"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS races (
    race TEXT PRIMARY KEY,
    finished_at INTEGER,
    {", ".join(f"{f.name} {f.sql}" + (f" DEFAULT {f.default}" if f.default is not None else "")
               for f in RACE_FIELDS)}
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
CREATE TABLE IF NOT EXISTS tlog (
    tournament TEXT NOT NULL,
    n INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT,
    PRIMARY KEY (tournament, n)
) WITHOUT ROWID;
{POOL_TABLE.strip()}
CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    password TEXT
);
CREATE TABLE IF NOT EXISTS player_keys (
    hash TEXT PRIMARY KEY,
    player TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tickets (
    hash TEXT PRIMARY KEY,
    player TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS known_networks (
    player TEXT NOT NULL,
    tag TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (player, tag)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS account_days (
    tag TEXT NOT NULL,
    day TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tag, day)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ratings (
    player TEXT NOT NULL,
    game TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    races INTEGER NOT NULL,
    PRIMARY KEY (player, game)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratings_board ON ratings (game, mu);
CREATE TABLE IF NOT EXISTS results (
    player TEXT NOT NULL,
    race TEXT NOT NULL,
    game TEXT NOT NULL,
    at INTEGER NOT NULL,
    place INTEGER NOT NULL,
    racers INTEGER NOT NULL,
    time_ms INTEGER,
    foundation INTEGER NOT NULL,
    total INTEGER NOT NULL,
    finished INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT,
    day TEXT,
    rated INTEGER NOT NULL,
    rating_before INTEGER,
    rating_after INTEGER,
    deviation INTEGER,
    shared INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (player, race)
);
CREATE INDEX IF NOT EXISTS results_recent ON results (player, at);
CREATE INDEX IF NOT EXISTS results_daily ON results (game, day) WHERE day IS NOT NULL;
CREATE INDEX IF NOT EXISTS results_race ON results (race);
CREATE TABLE IF NOT EXISTS scored (race TEXT PRIMARY KEY, at INTEGER NOT NULL, body TEXT);
CREATE TABLE IF NOT EXISTS to_score (race TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS daily (
    game TEXT NOT NULL,
    day TEXT NOT NULL,
    seed TEXT NOT NULL,
    salt TEXT NOT NULL,
    PRIMARY KEY (game, day)
);
CREATE TABLE IF NOT EXISTS held (
    race TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    counted TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS roles (
    player TEXT PRIMARY KEY,
    role TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS closures (
    player TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    by TEXT,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    race TEXT NOT NULL,
    player TEXT NOT NULL,
    points INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (race, player)
);
CREATE TABLE IF NOT EXISTS daily_attempts (
    game TEXT NOT NULL,
    day TEXT NOT NULL,
    player TEXT NOT NULL,
    race TEXT NOT NULL,
    PRIMARY KEY (game, day, player)
);
"""

#: A race's columns as they are read back: its id, when it ended, then its record.
COLUMNS = "race, finished_at, " + ", ".join(f.name for f in RACE_FIELDS)

INSERT_RACE = (f"INSERT INTO races (race, {', '.join(f.name for f in RACE_FIELDS)}) "
               f"VALUES ({', '.join('?' * (len(RACE_FIELDS) + 1))})")

#: Columns of the players' tables added since their first version: (table, column, type).
ADDED_COLUMNS = [
    ("results", "shared", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "resigned", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "aborted", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "walkout", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "account", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "net", "TEXT NOT NULL DEFAULT ''"),
    ("results", "hints", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "casual", "TEXT"),
    ("results", "flagged", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "held", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "cleared", "INTEGER NOT NULL DEFAULT 0"),
    ("results", "signals", "TEXT"),
    ("results", "racer", "TEXT NOT NULL DEFAULT ''"),
    ("daily_attempts", "net", "TEXT NOT NULL DEFAULT ''"),
    ("daily_attempts", "at", "INTEGER NOT NULL DEFAULT 0"),
]

#: Columns added since the first schema, for databases made before them.
MIGRATIONS = {
    f.name: f"ALTER TABLE races ADD COLUMN {f.name} {f.sql}"
            + (f" DEFAULT {f.default}" if f.default is not None else "")
    for f in ADDED_FIELDS
}


def race_row(race: Race) -> tuple[object, ...]:
    """The values of :data:`INSERT_RACE` for a new race."""
    record = race_record(race)
    return (race.race, *(record[f.name] for f in RACE_FIELDS))


def _entries(db: sqlite3.Connection, race_id: str) -> Iterator[LogEntry]:
    for at, kind, player, data, n in db.execute(
        "SELECT at, kind, player, data, n FROM log WHERE race = ? UNION ALL "
        "SELECT at, kind, player, data, n FROM journal WHERE race = ? ORDER BY 5",
        (race_id, race_id),
    ):
        try:
            value = None if data is None else json.loads(data)
        except ValueError:
            log.warning("race %s: log entry %d skipped (unreadable data)", race_id, n)
            continue
        yield LogEntry(race_id, at, kind, player, value)


def build_race(db: sqlite3.Connection, row: tuple[object, ...]) -> tuple[Race, int]:
    """Rebuild a race from its row (:data:`COLUMNS`) by replaying its log; also the number of
    log entries (the next entry's number)."""
    race_id, finished_at = str(row[0]), row[1]
    record = dict(zip((f.name for f in RACE_FIELDS), row[2:], strict=True))
    race = race_from_record(race_id, record)
    entries = list(_entries(db, race_id))
    count = db.execute("SELECT (SELECT count(*) FROM log WHERE race = ?) + "
                       "(SELECT count(*) FROM journal WHERE race = ?)",
                       (race_id, race_id)).fetchone()[0]
    replay(race, entries, None if finished_at is None else int(str(finished_at)))
    return race, int(count)


def build_tournament(db: sqlite3.Connection, row: tuple[object, ...]) -> tuple[Unit, int]:
    """Rebuild a tournament from its row and log; also the number of log entries."""
    tid, settings, host, created_at, _finished = row
    entries = []
    n = 0
    for at, kind, data, n in db.execute(
            "SELECT at, kind, data, n FROM tlog WHERE tournament = ? ORDER BY n", (tid,)):
        try:
            entries.append(TLogEntry(str(tid), at, kind,
                                     None if data is None else json.loads(data)))
        except ValueError:
            log.warning("tournament %s: log entry %d skipped (unreadable data)", tid, n)
    count = db.execute("SELECT count(*) FROM tlog WHERE tournament = ?", (tid,)).fetchone()[0]
    t = tournament_from_record(str(tid), {"settings": settings, "host_token": host,
                                          "created_at": created_at}, entries)
    return t, int(count)
