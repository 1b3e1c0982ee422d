"""The durable store interface: races and the ordered log of what each accepted.

The server makes every accepted command durable before anyone hears of it. A :class:`Store`
queues writes (:meth:`~Store.add_race`, :meth:`~Store.append`, :meth:`~Store.mark_finished`)
from the event loop without waiting, commits what was queued during one loop turn together,
and then runs the callbacks registered with :meth:`~Store.after_commit` in order: that is where
replies and events are sent. If a commit fails, none of its callbacks' ``ok`` run, each
``fail`` runs instead, the store calls :attr:`~Store.on_failure` with the races the batch
touched (the server rebuilds them from what is durable, so that a write that failed is never
visible) and reports itself unhealthy until a write succeeds again.

Implementations: :class:`solrace.store.sqlite_store.SQLiteStore` (the embedded default).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from solrace.core.race import Race
from solrace.core.race_parts import LogEntry
from solrace.core.tournament import TLogEntry
from solrace.core.units import Unit

OnFailure = Callable[[set[str], BaseException], None]
Callback = Callable[[], None]
Failure = Callable[[BaseException], None]

log = logging.getLogger(__name__)


def committed(done: asyncio.Future[None] | None, after: list[tuple[Callback, Failure | None]],
              on_commit: Callable[[], None] | None) -> None:
    """A batch is durable: wake whoever awaits it, run its callbacks in order, then
    ``on_commit`` (the server writes their replies out)."""
    if done is not None and not done.done():
        done.set_result(None)
    for ok, _ in after:
        try:
            ok()
        except Exception:
            log.exception("after-commit callback failed")
    if after and on_commit is not None:
        on_commit()


def failed(done: asyncio.Future[None] | None, after: list[tuple[Callback, Failure | None]],
           exc: BaseException) -> None:
    """A batch was not written: whoever awaits it gets ``exc``, each callback's failure
    handler runs instead."""
    if done is not None and not done.done():
        done.set_exception(exc)
        done.exception()  # retrieved: nobody may be awaiting it
    for _, fail in after:
        if fail is not None:
            try:
                fail(exc)
            except Exception:
                log.exception("commit-failure callback failed")


class Store(Protocol):
    #: Called after the callbacks of a successful commit (the server writes replies out).
    on_commit: Callable[[], None] | None
    #: Called after a failed commit with the ids of the races whose writes were lost.
    on_failure: OnFailure | None

    @property
    def healthy(self) -> bool:
        """False from a failed write until a write succeeds again."""

    def add_race(self, race: Race) -> None:
        """Queue a new race (its settings, seed and salt)."""

    def append(self, entries: list[LogEntry]) -> None:
        """Queue log entries, in order."""

    def mark_finished(self, race: str, at: int) -> None:
        """Queue the end of a race."""

    def pending(self) -> bool:
        """True while something queued is not committed yet."""

    def after_commit(
        self, ok: Callable[[], None], fail: Callable[[BaseException], None] | None = None
    ) -> None:
        """Run ``ok`` once everything queued so far is durable (at once if nothing is), or
        ``fail`` if that commit fails."""

    def flushed(self) -> Awaitable[None]:
        """Done once everything queued so far is durable (raises if the commit failed)."""

    async def probe(self) -> bool:
        """Try a small write now; True (and healthy again) if it went through."""

    def add_tournament(self, t: Unit) -> None:
        """Queue a new tournament (its settings and host token)."""

    def append_tournament(self, entries: list[TLogEntry]) -> None:
        """Queue tournament log entries, in order."""

    def mark_tournament_finished(self, tid: str, at: int) -> None:
        """Queue the end of a tournament."""

    async def load_tournament(self, tid: str) -> Unit | None:
        """Rebuild a tournament from its log (its races are loaded on their own)."""

    async def index_arena(self, aid: str, ends_at: int) -> None:
        """Keep an arena where :meth:`arena_ids` finds it (on Redis an index beside its unit:
        written after the arena itself, a hint; the SQLite file asks its table)."""

    async def arena_ids(self, ended_after: int) -> list[str]:
        """The arenas that end (or ended) after ``ended_after`` (unix ms), on any process."""

    async def load(self, race_id: str) -> Race | None:
        """Rebuild one race from its durable log, away from the event loop; None if unknown."""

    async def startup_races(self) -> list[Race]:
        """The races a process starting on this store runs at once, rebuilt: every unfinished
        race, for a store one process has to itself; none where several processes share the
        store (each race is taken on demand by one of them, see solrace.cluster)."""

    async def startup_tournaments(self) -> list[Unit]:
        """The same for tournaments (their races are loaded on their own)."""

    async def pool_put(self, game: str, entries: list[str]) -> None:
        """Add entries to the shared pool of ``game``, in order: solved winnable deals, each
        sealed by the pool (:mod:`solrace.solver.pool`), opaque text to the store."""

    async def pool_take(self, game: str, n: int) -> list[str]:
        """Take up to ``n`` entries out of the pool, oldest first, atomically: an entry taken
        here is never given to anyone else, by any process."""

    async def pool_size(self, game: str) -> int:
        """How many deals of ``game`` the pool holds."""

    def commit(self) -> None:
        """Commit what is queued now."""

    def send_now(self) -> None:
        """Start writing what is queued now, before the loop turn ends, if this store can
        without waiting for anything (nothing else in flight); else nothing: it goes at the
        end of the turn as always. Its callbacks still run once it is durable."""

    def close(self) -> None:
        """Commit what is queued and release the store."""
