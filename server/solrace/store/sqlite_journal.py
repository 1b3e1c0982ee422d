"""What one group commit of the SQLite store writes, in one transaction: a :class:`Batch`.

Everything :class:`~solrace.store.sqlite_store.SQLiteStore` queued during one loop turn (new
races and tournaments, log entries, races finished, races to score) goes out in one
transaction (:func:`write`). Log entries are first appended to ``journal`` (rowid order: a
commit writes one or two pages at the end of one table), and every ``archive_rows`` rows they
are copied, race by race, into ``log`` (clustered by race and entry number, so that a race reads
back in order) and the journal is emptied, in the same transaction (:func:`archive`). Writing
each move straight into ``log`` touched one page per race per commit: with dozens of busy races,
~8 pages (33 KiB of WAL) per commit instead of one, and a checkpoint every second under load.
Reading a race takes its rows from both tables; at start-up what a previous run left in the
journal is moved into ``log`` (:func:`archive_all`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field

from solrace.store.base import Callback, Failure
from solrace.store.sqlite_schema import INSERT_RACE


@dataclass
class Batch:
    """The rows of one loop turn, and who waits for their commit."""

    races: list[tuple[object, ...]] = field(default_factory=list)
    log: list[tuple[object, ...]] = field(default_factory=list)
    finished: list[tuple[int, str]] = field(default_factory=list)
    done: asyncio.Future[None] | None = None
    after: list[tuple[Callback, Failure | None]] = field(default_factory=list)
    #: Per race touched, its next entry number before this batch (None: added by it).
    first_n: dict[str, int | None] = field(default_factory=dict)
    tournaments: list[tuple[object, ...]] = field(default_factory=list)
    tlog: list[tuple[object, ...]] = field(default_factory=list)
    tfinished: list[tuple[int, str]] = field(default_factory=list)
    #: Races a player joined: the scoring sweep looks at them once they end.
    to_score: list[tuple[str]] = field(default_factory=list)
    #: Per tournament touched, its next entry number before this batch (None: added by it).
    first_tn: dict[str, int | None] = field(default_factory=dict)


def write(db: sqlite3.Connection, batch: Batch, unarchived: list[tuple[object, ...]],
          archive_rows: int) -> bool:
    """Write one batch in one transaction, archiving the journal when it holds
    ``archive_rows`` rows. ``unarchived`` (the journal's rows) gets the batch's log rows, but
    not if the transaction fails. True if the journal was archived (the caller empties
    ``unarchived`` then)."""
    mark = len(unarchived)
    archived = False
    try:
        db.execute("BEGIN")
        if batch.races:
            db.executemany(INSERT_RACE, batch.races)
        if batch.log:
            db.executemany(
                "INSERT INTO journal (race, n, at, kind, player, data) VALUES (?,?,?,?,?,?)",
                batch.log,
            )
            unarchived += batch.log
            if len(unarchived) >= archive_rows:
                archive(db, unarchived)
                archived = True
        if batch.finished:
            db.executemany("UPDATE races SET finished_at = ? WHERE race = ?", batch.finished)
        if batch.to_score:
            db.executemany("INSERT OR IGNORE INTO to_score VALUES (?)", batch.to_score)
        if batch.tournaments:
            db.executemany("INSERT INTO tournaments VALUES (?,?,?,?,NULL)", batch.tournaments)
        if batch.tlog:
            db.executemany("INSERT INTO tlog VALUES (?,?,?,?,?)", batch.tlog)
        if batch.tfinished:
            db.executemany("UPDATE tournaments SET finished_at = ? WHERE tournament = ?",
                           batch.tfinished)
        db.execute("COMMIT")
    except BaseException:
        del unarchived[mark:]  # what this transaction added is not in the journal
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return archived


def archive(db: sqlite3.Connection, rows: list[tuple[object, ...]]) -> None:
    """Inside a transaction: copy the journal's rows (``rows``) into ``log`` race by race,
    then empty the journal."""
    ordered = sorted(rows, key=lambda row: (row[0], row[1]))  # race, then n
    db.executemany("INSERT INTO log VALUES (?,?,?,?,?,?)", ordered)
    db.execute("DELETE FROM journal")


def archive_all(db: sqlite3.Connection) -> None:
    """At start-up: move what the journal holds into ``log``."""
    db.execute("BEGIN IMMEDIATE")
    try:
        rows = db.execute("SELECT race, n, at, kind, player, data FROM journal").fetchall()
        if rows:
            archive(db, rows)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
