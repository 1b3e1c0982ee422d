"""Players in the SQLite file of the races (:class:`~solrace.store.player_base.PlayerStore`).

Every call is one transaction on a connection of its own thread (one thread: they are short,
and SQLite takes one writer at a time anyway); a write waits at most for the race writer's
current commit (``busy_timeout``). The tables are created with the races' schema
(:mod:`solrace.store.sqlite_schema`); ``to_score`` is filled by the race writer itself, in the
transaction that writes a player's ``join``, so that a race with players is never forgotten by
the sweep.

Names are unique by their key (``name_key``: the skeleton, :mod:`solrace.core.names`). The
rule's version is kept in ``meta`` (``name_keys``): a database whose keys were made under
another (the NFKC case fold of before, or an older Unicode table) gets every player's key
made again the first time this store opens it, oldest player first, in one transaction. When
two players' names turn out to be one name under the new rule, the older keeps it; the newer
keeps his name as it is shown but gets a key of his own (``identity.own_key``), which no
other name can have (so nobody can take that name from him, and he can still rename himself).

Sign-in failures (:meth:`SQLitePlayers.failures`) are counted in this process's memory: the
embedded server is one process. The networks a player signed in from and the accounts made
per network and day are tables.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from solrace.core.identity import Player, name_key, own_key
from solrace.core.names import VERSION as NAMES_VERSION
from solrace.core.rating import Rating
from solrace.core.scoring import (
    Result,
    Scoring,
    changes,
    held_entries,
    new_ratings,
    with_ratings,
)
from solrace.settings import KNOWN_NETWORK_DAYS, KNOWN_NETWORKS
from solrace.store.memory_failures import MemoryFailures

log = logging.getLogger(__name__)

T = TypeVar("T")

RESULT_COLUMNS = ("player", "race", "game", "at", "place", "racers", "time_ms", "foundation",
                  "total", "finished", "name", "kind", "day", "rated", "rating_before",
                  "rating_after", "deviation", "shared", "resigned", "aborted", "walkout",
                  "account", "net", "hints", "casual", "flagged", "held", "cleared", "signals",
                  "racer")
#: The columns that hold a 0/1 flag.
_FLAGS = ("finished", "rated", "shared", "resigned", "aborted", "walkout", "account", "flagged",
          "held", "cleared")


def result_row(r: Result) -> tuple[Any, ...]:
    """A result as the values of :data:`RESULT_COLUMNS`."""
    return (r.player, r.race, r.game, r.at, r.place, r.racers, r.time_ms, r.foundation,
            r.total, int(r.finished), r.name, r.kind, r.day, int(r.rated), r.before, r.after,
            r.deviation, int(r.shared), int(r.resigned), int(r.aborted), int(r.walkout),
            int(r.account), r.net, r.hints, r.casual, int(r.flagged), int(r.held), 0,
            None if r.signals is None else json.dumps(r.signals), r.racer)


def _player(row: tuple[Any, ...] | None) -> Player | None:
    return None if row is None else Player(row[0], row[1], row[2], row[3])


def migrate_names(db: sqlite3.Connection) -> int:
    """Make every player's ``name_key`` again if it was made under another rule (see the
    module docstring); the number of players whose key changed."""
    row = db.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()
    if row is not None and row[0] == NAMES_VERSION:
        return 0
    db.execute("BEGIN IMMEDIATE")
    try:
        players = db.execute("SELECT id, name, name_key FROM players "
                             "ORDER BY created_at, id").fetchall()
        # Out of the way first: the new keys may be the old keys of others.
        db.execute("UPDATE players SET name_key = char(0) || id")
        used: set[str] = set()
        changed = 0
        for pid, name, old in players:
            key = name_key(name)
            if key in used:
                key = own_key(key, pid)
                log.warning("player %s: his name %r is now the same name as an older "
                            "player's: kept, under the key %r", pid, name, key)
            used.add(key)
            changed += key != old
            db.execute("UPDATE players SET name_key = ? WHERE id = ?", (key, pid))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('name_keys', ?)", (NAMES_VERSION,))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    if changed:
        log.info("names keyed again under %s: %d of %d players", NAMES_VERSION, changed,
                 len(players))
    return changed


def _result(row: tuple[Any, ...]) -> dict[str, Any]:
    r = dict(zip(RESULT_COLUMNS, row, strict=True))
    for flag in _FLAGS:
        r[flag] = bool(r[flag])
    r["signals"] = None if r["signals"] is None else json.loads(r["signals"])
    r["before"] = r.pop("rating_before")
    r["after"] = r.pop("rating_after")
    r["delta"] = None if r["after"] is None or r["before"] is None else r["after"] - r["before"]
    return r


class SQLitePlayers:
    """See the module docstring. ``path``: the races' database file."""

    def __init__(self, path: str, connect: Callable[[], sqlite3.Connection]) -> None:
        self.path = path
        self._connect = connect
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="solrace-players")
        self._local = threading.local()
        self._failures = MemoryFailures()

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
            try:  # before anything reads a name
                migrate_names(db)
            except sqlite3.OperationalError as exc:  # a read-only file: the keys it has
                log.error("cannot key the players' names again: %s", exc)
        return db

    async def _run(self, work: Callable[[sqlite3.Connection], T], write: bool = False) -> T:
        def job() -> T:
            db = self._db()
            if not write:
                return work(db)
            db.execute("BEGIN IMMEDIATE")
            try:
                out = work(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return out

        return await asyncio.get_running_loop().run_in_executor(self._thread, job)

    # ------------------------------------------------------------------ identity
    async def by_key(self, key_hash: str) -> Player | None:
        return await self._run(lambda db: _player(db.execute(
            "SELECT p.id, p.name, p.created_at, p.password FROM player_keys k "
            "JOIN players p ON p.id = k.player WHERE k.hash = ?", (key_hash,)).fetchone()))

    async def by_name(self, name: str) -> Player | None:
        return await self._run(lambda db: _player(db.execute(
            "SELECT id, name, created_at, password FROM players WHERE name_key = ?",
            (name_key(name),)).fetchone()))

    async def by_id(self, pid: str) -> Player | None:
        return await self._run(lambda db: _player(db.execute(
            "SELECT id, name, created_at, password FROM players WHERE id = ?",
            (pid,)).fetchone()))

    async def create(self, player: Player, key_hash: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            try:
                db.execute("INSERT INTO players VALUES (?,?,?,?,?)",
                           (player.id, player.name, name_key(player.name), player.created_at,
                            player.password))
            except sqlite3.IntegrityError:
                return False
            db.execute("INSERT OR REPLACE INTO player_keys VALUES (?,?,?)",
                       (key_hash, player.id, player.created_at))
            return True

        return await self._run(work, write=True)

    async def rename(self, pid: str, name: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            key = name_key(name)
            row = db.execute("SELECT name_key FROM players WHERE id = ?", (pid,)).fetchone()
            if row is not None and row[0] == own_key(key, pid):
                key = row[0]  # his own name, kept under a key of his own (migrate_names)
            try:
                db.execute("UPDATE players SET name = ?, name_key = ? WHERE id = ?",
                           (name, key, pid))
            except sqlite3.IntegrityError:
                return False
            return True

        return await self._run(work, write=True)

    async def set_password(self, pid: str, record: str) -> None:
        await self._run(lambda db: db.execute(
            "UPDATE players SET password = ? WHERE id = ?", (record, pid)), write=True)

    async def add_key(self, pid: str, key_hash: str, now: int) -> None:
        await self._run(lambda db: db.execute(
            "INSERT OR REPLACE INTO player_keys VALUES (?,?,?)", (key_hash, pid, now)),
            write=True)

    async def drop_key(self, key_hash: str) -> None:
        await self._run(lambda db: db.execute(
            "DELETE FROM player_keys WHERE hash = ?", (key_hash,)), write=True)

    async def put_ticket(self, ticket_hash: str, pid: str, expires_at: int) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM tickets WHERE expires_at < ?", (expires_at - 3_600_000,))
            db.execute("INSERT INTO tickets VALUES (?,?,?)", (ticket_hash, pid, expires_at))

        await self._run(work, write=True)

    async def take_ticket(self, ticket_hash: str, now: int) -> str | None:
        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute("DELETE FROM tickets WHERE hash = ? RETURNING player, expires_at",
                             (ticket_hash,)).fetchone()
            return None if row is None or row[1] < now else str(row[0])

        return await self._run(work, write=True)

    # ------------------------------------------------------- sign-ins and accounts
    async def failures(self, keys: list[str], now: int) -> list[tuple[int, int]]:
        return self._failures.get(keys, now)

    async def add_failure(self, keys: list[str], now: int) -> None:
        self._failures.add(keys, now)

    async def clear_failures(self, keys: list[str]) -> None:
        self._failures.clear(keys)

    async def known_network(self, pid: str, tag: str, now: int) -> bool:
        row = await self._run(lambda db: db.execute(
            "SELECT at FROM known_networks WHERE player = ? AND tag = ?", (pid, tag)).fetchone())
        return row is not None and row[0] > now - KNOWN_NETWORK_DAYS * 86_400_000

    async def add_network(self, pid: str, tag: str, now: int) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO known_networks VALUES (?,?,?)", (pid, tag, now))
            db.execute("DELETE FROM known_networks WHERE player = ? AND tag NOT IN (SELECT tag "
                       "FROM known_networks WHERE player = ? ORDER BY at DESC LIMIT ?)",
                       (pid, pid, KNOWN_NETWORKS))

        await self._run(work, write=True)

    async def take_account(self, tag: str, day: str, cap: int) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            db.execute("DELETE FROM account_days WHERE day < ?", (day,))
            row = db.execute("SELECT n FROM account_days WHERE tag = ? AND day = ?",
                             (tag, day)).fetchone()
            if row is not None and row[0] >= cap:
                return False
            db.execute("INSERT INTO account_days VALUES (?, ?, 1) ON CONFLICT (tag, day) "
                       "DO UPDATE SET n = n + 1", (tag, day))
            return True

        return await self._run(work, write=True)

    # ------------------------------------------------------------------- ratings
    @staticmethod
    def _ratings(db: sqlite3.Connection, pid: str, game: str | None = None
                 ) -> dict[str, Rating]:
        query = "SELECT game, mu, sigma, races FROM ratings WHERE player = ?"
        args: tuple[str, ...] = (pid,)
        if game is not None:
            query += " AND game = ?"
            args += (game,)
        return {g: Rating(mu, sigma, races) for g, mu, sigma, races in db.execute(query, args)}

    async def ratings(self, pid: str) -> dict[str, Rating]:
        return await self._run(lambda db: self._ratings(db, pid))

    async def score(self, s: Scoring) -> dict[str, Any] | None:
        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            if db.execute("SELECT 1 FROM scored WHERE race = ?", (s.race,)).fetchone():
                return None
            results: list[Result] = s.results
            moves: list[dict[str, Any]] = []
            if s.rated and not s.held:
                current = self._current(db, [k for k, _ in s.counted], s.game)
                new = new_ratings(s, current)
                moves = changes(s, current, new)
                results = with_ratings(s, current, new)
                self._write_ratings(db, s.game, new)
            elif s.held:  # what the ratings need once a moderator clears the race
                db.execute("INSERT OR REPLACE INTO held VALUES (?,?,?)",
                           (s.race, s.game, json.dumps(held_entries(s))))
            db.executemany(
                f"INSERT OR REPLACE INTO results ({', '.join(RESULT_COLUMNS)}) "
                f"VALUES ({','.join('?' * len(RESULT_COLUMNS))})",
                [result_row(r) for r in results])
            body = s.body(moves)
            at = results[0].at if results else 0
            db.execute("INSERT INTO scored VALUES (?,?,?)", (s.race, at, json.dumps(body)))
            db.execute("DELETE FROM to_score WHERE race = ?", (s.race,))
            return body

        return await self._run(work, write=True)

    def _current(self, db: sqlite3.Connection, keys: list[str], game: str
                 ) -> dict[str, Rating]:
        """The ratings of the players among ``keys`` that have one in ``game``."""
        current: dict[str, Rating] = {}
        for key in keys:
            if not key.startswith("bot:"):
                mine = self._ratings(db, key, game).get(game)
                if mine is not None:
                    current[key] = mine
        return current

    @staticmethod
    def _write_ratings(db: sqlite3.Connection, game: str, new: dict[str, Rating]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO ratings VALUES (?,?,?,?,?)",
            [(key, game, r.mu, r.sigma, r.races) for key, r in new.items()
             if not key.startswith("bot:")])

    async def together(self, a: str, b: str, since: int) -> int:
        return int(await self._run(lambda db: db.execute(
            "SELECT count(*) FROM results x JOIN results y ON x.race = y.race "
            "WHERE x.player = ? AND y.player = ? AND x.rated = 1 AND y.rated = 1 "
            "AND x.at >= ?", (a, b, since)).fetchone()[0]))

    async def walkouts(self, pid: str, since: int) -> list[int]:
        rows = await self._run(lambda db: db.execute(
            "SELECT at FROM results WHERE player = ? AND walkout = 1 AND at >= ? "
            "ORDER BY at", (pid, since)).fetchall())
        return [int(r[0]) for r in rows]

    async def scored(self, race: str) -> dict[str, Any] | None:
        row = await self._run(lambda db: db.execute(
            "SELECT body FROM scored WHERE race = ?", (race,)).fetchone())
        return None if row is None else dict(json.loads(row[0]))

    async def to_score(self, limit: int) -> list[str]:
        rows = await self._run(lambda db: db.execute(
            "SELECT t.race FROM to_score t JOIN races r ON r.race = t.race "
            "WHERE r.finished_at IS NOT NULL LIMIT ?", (limit,)).fetchall())
        return [r[0] for r in rows]

    async def done_scoring(self, race: str) -> None:
        await self._run(lambda db: db.execute("DELETE FROM to_score WHERE race = ?", (race,)),
                        write=True)

    async def results(self, pid: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = await self._run(lambda db: db.execute(
            f"SELECT {', '.join(RESULT_COLUMNS)} FROM results WHERE player = ? "
            "ORDER BY at DESC LIMIT ?", (pid, limit)).fetchall())
        return [_result(row) for row in rows]

    async def leaderboard(self, game: str, min_races: int, max_deviation: float,
                          limit: int) -> list[dict[str, Any]]:
        rows = await self._run(lambda db: db.execute(
            "SELECT p.id, p.name, r.mu, r.sigma, r.races FROM ratings r "
            "JOIN players p ON p.id = r.player WHERE r.game = ? AND r.races >= ? "
            "AND r.sigma <= ? AND r.player NOT IN (SELECT player FROM closures) "
            "ORDER BY r.mu DESC LIMIT ?",
            (game, min_races, max_deviation, limit)).fetchall())
        return [{"id": pid, "name": name, "rating": round(mu), "deviation": round(sigma),
                 "races": races} for pid, name, mu, sigma, races in rows]

    # --------------------------------------------------------------------- daily
    async def daily(self, game: str, day: str) -> tuple[int, str] | None:
        row = await self._run(lambda db: db.execute(
            "SELECT seed, salt FROM daily WHERE game = ? AND day = ?", (game, day)).fetchone())
        return None if row is None else (int(row[0]), str(row[1]))

    async def put_daily(self, game: str, day: str, seed: int, salt: str) -> tuple[int, str]:
        def work(db: sqlite3.Connection) -> tuple[int, str]:
            db.execute("INSERT OR IGNORE INTO daily VALUES (?,?,?,?)", (game, day, str(seed), salt))
            row = db.execute("SELECT seed, salt FROM daily WHERE game = ? AND day = ?",
                             (game, day)).fetchone()
            return int(row[0]), str(row[1])

        return await self._run(work, write=True)

    async def daily_attempt(self, game: str, day: str, pid: str, race: str, net: str = "",
                            at: int = 0) -> str:
        def work(db: sqlite3.Connection) -> str:
            db.execute("INSERT OR IGNORE INTO daily_attempts (game, day, player, race, net, at) "
                       "VALUES (?,?,?,?,?,?)", (game, day, pid, race, net, at))
            row = db.execute("SELECT race FROM daily_attempts WHERE game = ? AND day = ? "
                             "AND player = ?", (game, day, pid)).fetchone()
            return str(row[0])

        return await self._run(work, write=True)

    async def daily_lookers(self, game: str, day: str) -> list[dict[str, Any]]:
        rows = await self._run(lambda db: db.execute(
            "SELECT player, net, at FROM daily_attempts WHERE game = ? AND day = ?",
            (game, day)).fetchall())
        return [{"player": p, "net": net, "at": at} for p, net, at in rows]

    async def daily_results(self, game: str, day: str) -> list[dict[str, Any]]:
        rows = await self._run(lambda db: db.execute(
            f"SELECT {', '.join(RESULT_COLUMNS)} FROM results WHERE game = ? AND day = ? "
            "AND kind = 'daily'", (game, day)).fetchall())
        return [_result(row) for row in rows]

    async def days_played(self, pid: str, game: str, limit: int = 400) -> list[str]:
        rows = await self._run(lambda db: db.execute(
            "SELECT day FROM results WHERE player = ? AND game = ? AND kind = 'daily' "
            "AND aborted = 0 ORDER BY day DESC LIMIT ?", (pid, game, limit)).fetchall())
        return [r[0] for r in rows]

    def close(self) -> None:
        def shut() -> None:
            db = getattr(self._local, "db", None)
            if db is not None:
                db.close()

        self._thread.submit(shut)
        self._thread.shutdown(wait=True)
