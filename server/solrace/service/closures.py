"""Accounts closed for fair play leave the tournament and arena tables this process runs.

A moderator closes an account on any process (:mod:`solrace.service.moderation`); the closure
is stored (the moderation store's ``closures``), and a tournament or an arena is run by one
process, its owner. So each process looks, for the units it holds, which of their entrants'
accounts are closed — one store call per unit every :data:`~solrace.settings.CLOSED_SWEEP_S`
seconds, and for one account at once when the closure is made here — and each closure found
becomes the unit's own durable entry (:meth:`~solrace.core.arena.Arena.close_account`,
:meth:`~solrace.core.tournament.Tournament.close_account`: no place in its table, marked
``closed``), written and sent as any of its outcomes. A table built after a restart, or by
another process from the store, replays that entry; a closure made while nobody held the unit
is found by the first sweep after it is held again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from solrace.core.tournament_parts import TOutcome
from solrace.core.units import Unit
from solrace.settings import CLOSED_SWEEP_S

log = logging.getLogger(__name__)

#: Which of these players' accounts are closed (the moderation store's ``closed``).
Closed = Callable[[list[str]], Awaitable[set[str]]]


def open_players(unit: Unit) -> list[str]:
    """The unit's entrants' player ids whose accounts it does not know closed."""
    return sorted({e.player for e in unit.entrants.values()
                   if e.player is not None and not e.closed})


class Closures:
    """See the module docstring. ``units()``: the tournaments and arenas held here;
    ``record(unit, outcome)``: make a unit's outcome durable, then send it (its director's);
    ``healthy()``: may the store be written now?"""

    def __init__(self, closed: Closed, units: Callable[[], Iterable[Unit]],
                 record: Callable[[Unit, TOutcome], None], clock: Callable[[], int],
                 healthy: Callable[[], bool]) -> None:
        self.closed = closed
        self.units = units
        self.record = record
        self.clock = clock
        self.healthy = healthy

    def close_here(self, pid: str) -> int:
        """An account was closed by a moderator on this process: out of the tables held here
        at once (the others' sweeps find it). How many units changed."""
        return sum(self._close(unit, pid) for unit in list(self.units()))

    async def sweep(self) -> int:
        """Look for closed entrants in every unit held here; how many units changed."""
        n = 0
        for unit in list(self.units()):
            pids = open_players(unit)
            if not pids or not self.healthy():
                continue
            n += sum(self._close(unit, pid) for pid in sorted(await self.closed(pids)))
        return n

    def _close(self, unit: Unit, pid: str) -> bool:
        """``pid``'s account out of ``unit``'s table, written and sent; False when the unit
        had nothing to change (not an entrant, or closed there already)."""
        out = unit.close_account(pid, self.clock())
        if out.log:
            self.record(unit, out)
        return bool(out.log)

    async def run(self) -> None:
        """Sweep every CLOSED_SWEEP_S seconds (a task of the process's supervisor)."""
        while True:
            try:
                n = await self.sweep()
                if n:
                    log.warning("closed accounts left the tables of %d units", n)
            except Exception:
                log.exception("the sweep of closed accounts failed")
            await asyncio.sleep(CLOSED_SWEEP_S)
