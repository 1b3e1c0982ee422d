"""The embedded :class:`~solrace.store.base.Store`: SQLite (stdlib ``sqlite3``), one file.

A race is stored as its creation row plus the log of everything it accepted (joins with their
tokens, ready, start, moves, undos, resigns), each with its time. Loading a race replays the log
through the sans-I/O room, which rebuilds exactly the same state.

Writes are group commits: :meth:`SQLiteStore.add_race` and :meth:`SQLiteStore.append` only
queue rows, and everything queued during one event-loop turn is committed in one transaction
at its end (under load many moves share it); checkpoints run in a worker thread (see
:class:`SQLiteStore`). Replies and events are sent from :meth:`SQLiteStore.after_commit`
callbacks, so a move a racer saw acknowledged is on disk; a commit that fails (full disk,
read-only file) runs the callbacks' failure handlers instead and tells the server which races
to rebuild from disk. The database runs in WAL mode with ``synchronous=NORMAL``: a commit
is a write into the WAL file without fsync, which survives ``kill -9`` of the server (the data
is in the OS page cache) but not a power cut of the machine (the last transactions may be lost
then; the database stays intact).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from solrace.core.race import Race
from solrace.core.race_parts import LogEntry
from solrace.core.tournament import TLogEntry
from solrace.core.units import Unit
from solrace.settings import ARCHIVE_ROWS, CHECK_WAL_EVERY, CHECKPOINT_BYTES
from solrace.store import sqlite_journal as journal
from solrace.store.base import Callback, Failure, OnFailure, committed, failed
from solrace.store.records import tournament_record
from solrace.store.sqlite_journal import Batch
from solrace.store.sqlite_moderation import SQLiteModeration
from solrace.store.sqlite_players import SQLitePlayers
from solrace.store.sqlite_schema import (
    ADDED_COLUMNS,
    COLUMNS,
    MIGRATIONS,
    POOL_TABLE,
    SCHEMA,
    build_race,
    build_tournament,
    create_private,
    dumps,
    race_row,
)

log = logging.getLogger(__name__)


class SQLiteStore:
    """SQLite storage with group commits (see the module docstring).

    Log entries are first appended to ``journal``, and every ``ARCHIVE_ROWS`` rows they are
    copied, race by race, into ``log`` (:mod:`solrace.store.sqlite_journal`: what one commit
    writes, and why); reading a race takes its rows from both tables.

    Rows are queued from the event loop and committed together at the end of the loop turn, in
    the loop's thread: a WAL commit without fsync is a few tens of microseconds. The expensive
    part of SQLite, the checkpoint (copying the WAL into the database and fsyncing it; measured
    at up to 400 ms on this machine), never runs in the loop: automatic checkpoints are off, and
    once the WAL passes ``checkpoint_bytes`` a worker thread checkpoints and truncates it while
    commits pause. During that pause moves wait for their acknowledgement, but the event loop
    keeps serving every other message. Reads (start-up recovery, finished races for the API)
    use a second connection; in WAL mode they never block the writer.
    """

    def __init__(
        self,
        path: str | Path,
        checkpoint_bytes: int = CHECKPOINT_BYTES,
        check_wal_every: int = CHECK_WAL_EVERY,
        archive_rows: int = ARCHIVE_ROWS,
    ) -> None:
        self.path = str(path)
        self._healthy = True
        self._readonly = False
        self.db: sqlite3.Connection
        self._writer: sqlite3.Connection | None = None
        try:
            self._open()
        except sqlite3.OperationalError as exc:
            if not os.path.exists(self.path):
                raise
            # A database that exists but cannot be written (a read-only file or filesystem):
            # serve what it holds, refuse every write, and say so (/healthz: 503).
            log.error("database %s cannot be written (%s): read-only until it can", path, exc)
            self._readonly = True
            self._healthy = False
            self.db = self._connect()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="solrace-db")
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="solrace-read")
        self.checkpoint_bytes = checkpoint_bytes
        self.checkpoints = 0
        self._commits = 0
        self.check_wal_every = check_wal_every
        self.archive_rows = archive_rows
        #: Called after the callbacks of a commit (the server writes their replies out at once
        #: instead of one more loop iteration later).
        self.on_commit: Callable[[], None] | None = None
        #: Called after a failed commit with the races whose queued writes were lost.
        self.on_failure: OnFailure | None = None
        self._next_n: dict[str, int] = {}
        self._next_tn: dict[str, int] = {}
        # Rows in the journal, not yet in ``log`` (all of the journal's rows).
        self._unarchived: list[tuple[object, ...]] = []
        self._batch: Batch | None = None  # collecting
        self._checkpointing: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._players: SQLitePlayers | None = None

    def _open(self) -> None:
        """Open the database for writing: schema, migrations, and what a previous run left in
        the journal moved into ``log``."""
        create_private(self.path)
        db = self._connect(writable=True)
        db.executescript(SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(races)")}
        for column, sql in MIGRATIONS.items():
            if column not in columns:
                db.execute(sql)
        known: dict[str, set[str]] = {}
        for table, column, sql in ADDED_COLUMNS:
            if table not in known:
                known[table] = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if column not in known[table]:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {sql}")
        # Made after the columns it covers (a database from before them gets it now).
        db.execute("CREATE INDEX IF NOT EXISTS results_flagged ON results (flagged, cleared) "
                   "WHERE flagged = 1")
        if "entry" not in {row[1] for row in db.execute("PRAGMA table_info(pool)")}:
            # The pool of a version that kept its deals in clear (seed, moves): those deals
            # were readable in every copy of the file, so they are dropped, never dealt (sealed
            # in place, they would still be dealt, and their clear text stay in the file's free
            # pages and in its old copies); the solver refills the pool.
            (old,) = db.execute("SELECT count(*) FROM pool").fetchone()
            if old:
                log.warning("the pool's %d deals in clear text (an older version's) are "
                            "dropped, never dealt", old)
            db.execute("DROP TABLE pool")
            db.executescript(POOL_TABLE)
        writer = self._connect(writable=True)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        self.db, self._writer, self._readonly = db, writer, False
        journal.archive_all(writer)

    def _connect(self, writable: bool = False) -> sqlite3.Connection:
        if self._readonly and not writable:
            # Nothing can change it: read it as it is (SQLite cannot set up WAL sharing on a
            # read-only filesystem).
            uri = f"file:{urllib.parse.quote(self.path)}?immutable=1"
            return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
        return db

    # ------------------------------------------------------------------ writes
    def _current(self) -> Batch:
        if self._batch is None:
            self._batch = Batch()
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                self._loop = loop
                self._batch.done = loop.create_future()
                loop.call_soon(self._end_of_turn)
        return self._batch

    @property
    def healthy(self) -> bool:
        return self._healthy

    def add_race(self, race: Race) -> None:
        batch = self._current()
        batch.first_n.setdefault(race.race, None)
        batch.races.append(race_row(race))
        self._next_n[race.race] = 0

    def append(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        batch = self._current()
        rows, first_n = batch.log, batch.first_n
        next_n = self._next_n
        for race, at, kind, player, data in entries:
            n = next_n.get(race, 0)
            if race not in first_n:
                first_n[race] = n
            next_n[race] = n + 1
            rows.append((race, n, at, kind, player, None if data is None else dumps(data)))
            if kind == "join" and "id" in data:
                batch.to_score.append((race,))

    # ------------------------------------------------------------ tournaments
    def add_tournament(self, t: Unit) -> None:
        batch = self._current()
        batch.first_tn.setdefault(t.tid, None)
        record = tournament_record(t)
        batch.tournaments.append((t.tid, record["settings"], record["host_token"],
                                  record["created_at"]))
        self._next_tn[t.tid] = 0

    def append_tournament(self, entries: list[TLogEntry]) -> None:
        if not entries:
            return
        batch = self._current()
        for tid, at, kind, data in entries:
            n = self._next_tn.get(tid, 0)
            batch.first_tn.setdefault(tid, n)
            self._next_tn[tid] = n + 1
            batch.tlog.append((tid, n, at, kind, None if data is None else dumps(data)))

    def mark_tournament_finished(self, tid: str, at: int) -> None:
        batch = self._current()
        batch.first_tn.setdefault(tid, self._next_tn.get(tid))
        batch.tfinished.append((at, tid))

    def _build_tournament(self, db: sqlite3.Connection, row: tuple[object, ...]) -> Unit:
        t, n = build_tournament(db, row)
        self._next_tn.setdefault(t.tid, n)
        return t

    def read_tournament(self, tid: str, db: sqlite3.Connection | None = None
                        ) -> Unit | None:
        db = db or self.db
        row = db.execute("SELECT * FROM tournaments WHERE tournament = ?", (tid,)).fetchone()
        return None if row is None else self._build_tournament(db, row)

    async def load_tournament(self, tid: str) -> Unit | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reader, self._read_tournament_in_thread, tid)

    def _read_tournament_in_thread(self, tid: str) -> Unit | None:
        db = self._connect()
        try:
            return self.read_tournament(tid, db)
        finally:
            db.close()

    async def index_arena(self, aid: str, ends_at: int) -> None:
        pass  # the table is the index: arena_ids asks it

    async def arena_ids(self, ended_after: int) -> list[str]:
        def read() -> list[str]:
            db = self._connect()
            try:
                rows = db.execute(
                    "SELECT tournament, settings FROM tournaments WHERE settings LIKE "
                    "'{\"kind\": \"arena\"%'").fetchall()
            finally:
                db.close()
            out = []
            for tid, settings in rows:
                record = json.loads(settings)
                ends = int(record["starts_at"]) + int(record["minutes"]) * 60_000
                if ends >= ended_after:
                    out.append(str(tid))
            return out

        return await asyncio.get_running_loop().run_in_executor(self._reader, read)

    async def startup_tournaments(self) -> list[Unit]:
        return await asyncio.get_running_loop().run_in_executor(
            self._reader, self._unfinished_tournaments)

    def _unfinished_tournaments(self) -> list[Unit]:
        db = self._connect()
        try:
            out = []
            for row in db.execute(
                    "SELECT * FROM tournaments WHERE finished_at IS NULL").fetchall():
                try:
                    out.append(self._build_tournament(db, row))
                except Exception:
                    log.exception("cannot rebuild tournament %s", row[0])
            return out
        finally:
            db.close()

    def mark_finished(self, race: str, at: int) -> None:
        batch = self._current()
        if race not in batch.first_n:
            batch.first_n[race] = self._next_n.get(race)
        batch.finished.append((at, race))

    def _write(self, batch: Batch) -> None:
        """Write one batch in one transaction (:func:`solrace.store.sqlite_journal.write`)."""
        db = self._writer
        if db is None:
            raise sqlite3.OperationalError("the database cannot be written")
        if journal.write(db, batch, self._unarchived, self.archive_rows):
            self._unarchived = []

    def _end_of_turn(self) -> None:
        """Commit the batch of this loop turn, unless a checkpoint is running (then the batch
        keeps collecting and is committed when the checkpoint ends)."""
        if self._checkpointing is None:
            self.commit()

    def send_now(self) -> None:
        """Nothing: a commit here is synchronous, so the loop turn's writes wait for its end
        to go in one transaction."""

    def commit(self) -> None:
        """Write everything queued now in one transaction, then run the callbacks: each
        ``ok`` after a commit; after a failed one each ``fail``, then :attr:`on_failure`."""
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        batch, self._batch = self._batch, None
        if batch is None:
            return
        try:
            self._write(batch)
        except Exception as exc:
            self._failed(batch, exc)
            return
        self._healthy = True
        committed(batch.done, batch.after, self.on_commit)
        self._maybe_checkpoint()

    def _failed(self, batch: Batch, exc: Exception) -> None:
        """A commit failed: nothing of ``batch`` is durable, so nothing of it may be seen."""
        log.error("commit failed (%d rows of %d races lost): %s",
                  len(batch.log), len(batch.first_n), exc)
        self._healthy = False
        for race, n in batch.first_n.items():  # entry numbers continue from what is durable
            if n is None:
                self._next_n.pop(race, None)
            else:
                self._next_n[race] = n
        for tid, n in batch.first_tn.items():
            if n is None:
                self._next_tn.pop(tid, None)
            else:
                self._next_tn[tid] = n
        failed(batch.done, batch.after, exc)
        if self.on_failure is not None and (batch.first_n or batch.first_tn):
            self.on_failure(set(batch.first_n) | set(batch.first_tn), exc)

    async def probe(self) -> bool:
        """A small write (when nothing is queued): True, and healthy again, if it went
        through."""
        if self._batch is not None or (
            self._checkpointing is not None and not self._checkpointing.done()
        ):
            return self._healthy
        try:
            if self._readonly:
                old = self.db
                self._open()
                old.close()
            assert self._writer is not None
            with self._writer:
                self._writer.execute("BEGIN")
                self._writer.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('probe', hex(randomblob(64)))"
                )
        except sqlite3.Error as exc:
            log.warning("store still unwritable: %s", exc)
            self._healthy = False
            return False
        self._healthy = True
        return True

    def _maybe_checkpoint(self) -> None:
        if self._loop is None or self._checkpointing is not None:
            return
        # The WAL grows by a few pages per commit: looking at its size every so many commits
        # saves a system call per commit.
        self._commits += 1
        if self._commits % self.check_wal_every:
            return
        try:
            size = os.stat(self.path + "-wal").st_size
        except OSError:
            return
        if size < self.checkpoint_bytes:
            return
        self._checkpointing = self._loop.run_in_executor(self._thread, self._checkpoint)
        self._checkpointing.add_done_callback(self._checkpointed)

    def _checkpoint(self) -> None:
        """In the worker thread, while commits pause: copy the WAL into the database, fsync,
        and truncate the WAL so that it does not grow without bound."""
        assert self._writer is not None
        self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _checkpointed(self, future: asyncio.Future[None]) -> None:
        self._checkpointing = None
        self.checkpoints += 1
        if future.exception() is not None:
            log.error("checkpoint failed: %r", future.exception())
        self.commit()  # what collected meanwhile

    def pending(self) -> bool:
        """True while something queued is not committed yet."""
        return self._batch is not None

    def after_commit(self, ok: Callback, fail: Failure | None = None) -> None:
        """Call ``ok`` once everything queued so far is committed (at once if nothing is), or
        ``fail`` if that commit fails.

        Callbacks run in queue order, right after the commit, in the loop's thread. This is how
        acknowledgements go out without the connection's task waiting for the commit: the
        reader goes on with the next frame, the reply leaves once its move is on disk.
        """
        if self._batch is None:
            ok()
        else:
            self._batch.after.append((ok, fail))

    def flushed(self) -> asyncio.Future[None]:
        """A future done once everything queued so far is committed (done now if nothing is).

        Cancelling the awaiting task does not cancel the commit: the future is shielded.
        """
        batch = self._batch
        if batch is None or batch.done is None:
            if batch is not None:
                self.commit()
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            fut.set_result(None)
            return fut
        return asyncio.shield(batch.done)

    # ------------------------------------------------------------------- reads
    def _build(self, db: sqlite3.Connection, row: tuple[object, ...]) -> Race:
        race, n = build_race(db, row)
        if row[1] is None:  # finished_at: a race still running goes on writing its log
            self._next_n.setdefault(race.race, n)
        return race

    def read(self, race_id: str, db: sqlite3.Connection | None = None) -> Race | None:
        """Rebuild one race (finished or not) from its row and log; None if unknown. Blocking:
        the server reads through :meth:`load`, in a reader thread."""
        db = db or self.db
        row = db.execute(f"SELECT {COLUMNS} FROM races WHERE race = ?", (race_id,)).fetchone()
        return None if row is None else self._build(db, row)

    async def load(self, race_id: str) -> Race | None:
        """:meth:`read` in the reader thread, so that a long log never stalls the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reader, self._read_in_thread, race_id)

    def _read_in_thread(self, race_id: str) -> Race | None:
        db = self._connect()
        try:
            return self.read(race_id, db)
        finally:
            db.close()

    async def startup_races(self) -> list[Race]:
        """Every race not marked finished, rebuilt from seed + log (at start-up)."""
        return await asyncio.get_running_loop().run_in_executor(self._reader, self.unfinished)

    def unfinished(self) -> list[Race]:
        """:meth:`startup_races`, blocking (in the reader thread)."""
        db = self._connect()
        try:
            races = []
            rows = db.execute(
                f"SELECT {COLUMNS} FROM races WHERE finished_at IS NULL"
            ).fetchall()
            for row in rows:
                try:
                    races.append(self._build(db, row))
                except Exception:
                    log.exception("cannot rebuild race %s", row[0])
            return races
        finally:
            db.close()

    # ----------------------------------------------------------------- players
    def players(self) -> SQLitePlayers:
        """The players kept in the same file (solrace.store.sqlite_players)."""
        if self._players is None:
            self._players = SQLitePlayers(self.path, self._connect)
        return self._players

    def moderation(self) -> SQLiteModeration:
        """Fair play, kept with the players (solrace.store.sqlite_moderation)."""
        return SQLiteModeration(self.players())

    # -------------------------------------------------------------------- pool
    def _pool(self, work: Callable[[sqlite3.Connection], object]) -> object:
        """Run ``work`` in one write transaction on a connection of its own (in a worker
        thread: the loop's writer waits at most for this short transaction)."""
        db = self._connect(writable=True)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                out = work(db)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return out
        finally:
            db.close()

    async def pool_put(self, game: str, entries: list[str]) -> None:
        rows = [(game, entry) for entry in entries]
        await asyncio.get_running_loop().run_in_executor(
            self._reader, self._pool,
            lambda db: db.executemany("INSERT INTO pool (game, entry) VALUES (?,?)", rows))

    async def pool_take(self, game: str, n: int) -> list[str]:
        def take(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "DELETE FROM pool WHERE id IN (SELECT id FROM pool WHERE game = ? ORDER BY id "
                "LIMIT ?) RETURNING id, entry", (game, n)).fetchall()
            return [str(entry) for _, entry in sorted(rows)]

        taken = await asyncio.get_running_loop().run_in_executor(self._reader, self._pool, take)
        return taken  # type: ignore[return-value]

    async def pool_size(self, game: str) -> int:
        def size() -> int:
            db = self._connect()
            try:
                row = db.execute("SELECT count(*) FROM pool WHERE game = ?", (game,)).fetchone()
                return int(row[0])
            finally:
                db.close()

        return await asyncio.get_running_loop().run_in_executor(self._reader, size)

    def close(self) -> None:
        """Wait for a running checkpoint, commit what is queued, close both connections."""
        if self._players is not None:
            self._players.close()
        self._thread.shutdown(wait=True)
        self._reader.shutdown(wait=True)
        self._checkpointing = None
        with contextlib.suppress(Exception):
            self.commit()
        if self._writer is not None:
            self._writer.close()
        self.db.close()
