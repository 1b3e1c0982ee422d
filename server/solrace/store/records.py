"""A race and a tournament as every store keeps them, in one place.

A race is stored as its *record* — the settings it was created with, flat: numbers, text and
0/1 flags (:data:`RACE_FIELDS`) — plus the ordered log of what it accepted; a tournament as
its record plus its own log. Each store writes the record its way (SQLite: a row of the
``races`` table, whose columns are these fields; Redis: a hash) and reads it back as a mapping
of the same names, and both rebuild the race here, by replaying its log through the sans-I/O
room. A new race option is a new field here, and nowhere else in the stores.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from solrace.core.arena import Arena, ArenaSettings
from solrace.core.race import Race
from solrace.core.race_parts import LogEntry, Options
from solrace.core.tournament import Settings, TLogEntry, Tournament
from solrace.core.units import Unit

log = logging.getLogger("solrace.store")

Record = dict[str, Any]


class Field(NamedTuple):
    """One field of a race's record: its name, SQL type, and the value a record written
    before the field existed has (None: it always existed, or it may be empty); ``added``:
    a field that may be empty, added after the first schema."""

    name: str
    sql: str
    default: int | None = None
    added: bool = False


#: The record of a race, in the order of the SQLite table's columns (after ``race``). Fields
#: with a default were added after the first schema (old databases get them with it).
RACE_FIELDS = (
    Field("game", "TEXT NOT NULL"),
    Field("seed", "TEXT NOT NULL"),  # a decimal string: 64-bit seeds do not fit every reader
    Field("salt", "TEXT NOT NULL"),
    Field("players", "INTEGER NOT NULL"),
    Field("time_limit", "INTEGER NOT NULL"),
    Field("undo", "INTEGER NOT NULL"),
    Field("created_at", "INTEGER NOT NULL"),
    Field("host_token", "TEXT NOT NULL"),
    Field("countdown_ms", "INTEGER NOT NULL"),
    Field("seed_chosen", "INTEGER NOT NULL", 0),
    Field("public", "INTEGER NOT NULL", 0),
    Field("seated_until", "INTEGER"),
    Field("forfeit", "INTEGER NOT NULL", 0),
    Field("hints", "INTEGER NOT NULL", 0),
    Field("winnable", "INTEGER NOT NULL", 0),
    Field("demo_catalogue", "INTEGER NOT NULL", 0),
    Field("rated", "INTEGER NOT NULL", 0),
    Field("kind", "TEXT", added=True),
    Field("day", "TEXT", added=True),
    Field("absent_ends", "INTEGER NOT NULL", 0),
    # 0: a race made before the last racer's idle rule (solrace.core.last_racer).
    Field("last_idle_ms", "INTEGER NOT NULL", 0),
)
#: Fields added after the first schema, with their default.
ADDED_FIELDS = tuple(f for f in RACE_FIELDS
                     if f.default is not None or f.added or f.name == "seated_until")


def race_record(race: Race) -> Record:
    """What a store keeps of a new race besides its log (flags as 0/1)."""
    o = race.options
    return {
        "game": race.game, "seed": str(race.seed), "salt": race.salt, "players": o.players,
        "time_limit": o.time_limit, "undo": int(o.undo), "created_at": race.created_at,
        "host_token": race.host_token, "countdown_ms": race.countdown_ms,
        "seed_chosen": int(race.seed_chosen), "public": int(o.public),
        "seated_until": race.seated_until, "forfeit": int(race.forfeit),
        "hints": int(o.hints), "winnable": int(o.winnable),
        "demo_catalogue": int(o.demo_catalogue), "rated": int(o.rated), "kind": o.kind,
        "day": o.day, "absent_ends": int(race.absent_ends), "last_idle_ms": race.last_idle_ms,
    }


def _int(record: Mapping[str, Any], name: str, default: int | None = None) -> int | None:
    value = record.get(name, default)
    if value is None or value == b"" or value == "":
        return default
    return int(value.decode() if isinstance(value, bytes) else value)


def _text(record: Mapping[str, Any], name: str) -> str:
    value = record[name]
    return value.decode() if isinstance(value, bytes) else str(value)


def race_from_record(race_id: str, record: Mapping[str, Any]) -> Race:
    """A race as it was created, from its record as any store reads it back (values may be
    numbers, text or bytes; a field an older record lacks takes its default)."""
    def flag(name: str) -> bool:
        return bool(_int(record, name, 0))

    def text(name: str) -> str | None:
        value = record.get(name)
        if value is None or value in (b"", ""):
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    def num(name: str) -> int:
        value = _int(record, name)
        assert value is not None, name
        return value

    return Race(
        race_id, _text(record, "game"), int(_text(record, "seed")), _text(record, "salt"),
        Options(num("players"), num("time_limit"), flag("undo"), flag("public"),
                flag("hints"), flag("winnable"), flag("demo_catalogue"), flag("rated"),
                text("kind"), text("day")),
        num("created_at"), _text(record, "host_token"), countdown_ms=num("countdown_ms"),
        seed_chosen=flag("seed_chosen"), seated_until=_int(record, "seated_until"),
        forfeit=flag("forfeit"), absent_ends=flag("absent_ends"),
        last_idle_ms=_int(record, "last_idle_ms", 0) or 0,
    )


def replay(race: Race, entries: Iterable[LogEntry], finished_at: int | None) -> Race:
    """``race`` with its log replayed (a damaged entry is logged and skipped: one bad entry
    never loses a whole race), then, if the store says it ended, ticked to that time (a race
    ended by its time limit has no log entry)."""
    for n, entry in enumerate(entries):
        try:
            race.replay(entry)
        except Exception as exc:
            log.warning("race %s: log entry %d skipped (%s: %s)", race.race, n, entry.kind, exc)
    if finished_at is not None and race.status != "finished":
        race.tick(finished_at)
    return race


def tournament_record(t: Unit) -> Record:
    """What a store keeps of a new tournament (or arena) besides its log."""
    return {"settings": json.dumps(t.settings.as_record()), "host_token": t.host_token,
            "created_at": t.created_at}


def tournament_from_record(tid: str, record: Mapping[str, Any],
                           entries: Iterable[TLogEntry]) -> Unit:
    """A tournament (or an arena: its settings say ``kind: "arena"``) rebuilt from its record
    and log (a damaged entry is logged, skipped)."""
    settings = json.loads(_text(record, "settings"))
    created_at = int(_text(record, "created_at"))
    t: Unit
    if settings.get("kind") == "arena":
        t = Arena(tid, ArenaSettings.from_record(settings), created_at)
    else:
        t = Tournament(tid, Settings.from_record(settings), _text(record, "host_token"),
                       created_at)
    for n, entry in enumerate(entries):
        try:
            t.replay(entry)
        except Exception as exc:
            log.warning("tournament %s: log entry %d skipped (%s)", tid, n, exc)
    return t
