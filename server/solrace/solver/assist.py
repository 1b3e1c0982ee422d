"""What the solver adds to races: secret winnable deals, hints and par.

:class:`Assist` sits beside the hub. It draws new deals
(:class:`~solrace.solver.deal_source.DealSource`), works out hints for racers and par for revealed
deals with the :class:`~solrace.solver.jobs.Solver`, and keeps what it learned:

- **Hints**: the dispatcher cannot wait for a search, so a ``hint`` command it has no answer
  for raises :class:`~solrace.core.effects.NeedsHint`; the connection awaits :meth:`Assist.hint`
  (the search runs in the solver's process) and dispatches the command again, which then
  finds the answer here, counts the hint durably and replies. Each client address has at most
  :data:`MAX_HINTS_IN_FLIGHT` hints being worked out at once.
- **Par** is known at creation for a catalogued deal; for any other deal the solver works it
  out once the deal is revealed (never before: a par of "unwinnable" would tell the racers
  something about the deal), and everyone following the race gets a ``par`` message.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from solrace.core.effects import NeedsHint
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.protocol import messages
from solrace.protocol.event import Event
from solrace.settings import MAX_ANSWERS, MAX_HINTS_IN_FLIGHT
from solrace.solver.deal_source import DealSource
from solrace.solver.jobs import Par, Solver, SolverBusy


class Assist:
    """See the module docstring. ``solver`` None: no hints, par only for deals whose par is
    known at once (the pool's). ``publish(race, event)`` sends a late par to its followers."""

    def __init__(self, solver: Solver | None, deals: DealSource,
                 publish: Callable[[str, Event], None]) -> None:
        self.publish = publish
        self.solver = solver
        self.deals = deals
        self.answers: OrderedDict[tuple[str, str, int], dict[str, Any]] = OrderedDict()
        self.in_flight: dict[str, int] = {}

    # ---------------------------------------------------------------- deals
    def known(self, race: Race) -> None:
        """Give a race the par already known for its deal (catalogue or earlier solve)."""
        if race.par is None:
            race.par = self.deals.par(race.game, race.seed)
        if race.par is None and self.solver is not None:
            race.par = self.solver.pars.get((race.game, race.seed))

    # ------------------------------------------------------------------ par
    def revealed(self, races: Iterable[Race]) -> None:
        """These races' deal (one deal) was revealed: make sure their par gets known."""
        races = [r for r in races if r.par is None]
        if not races:
            return
        for race in races:
            self.known(race)
        waiting = [r for r in races if r.par is None]
        if not waiting or self.solver is None:
            return
        first = waiting[0]
        par = self.solver.par(first.game, first.seed, lambda par: self._par(waiting, par))
        if par is not None:
            self._par(waiting, par)

    def _par(self, races: list[Race], par: Par) -> None:
        for race in races:
            race.par = par
            self.publish(race.race, Event(messages.par(race)))

    # ---------------------------------------------------------------- hints
    def answer(self, race: str, player: str, seq: int) -> dict[str, Any] | None:
        """The hint worked out for this racer at this position, if any."""
        return self.answers.get((race, player, seq))

    def refusal(self, address: str) -> RaceError | None:
        """Why no hint can be worked out for this client now, or None."""
        if self.solver is None or not self.solver.hints_on:
            return RaceError("unavailable", "this server gives no hints")
        if self.in_flight.get(address, 0) >= MAX_HINTS_IN_FLIGHT:
            return RaceError("rate_limited", "hints are being worked out for you: wait for them")
        return None

    async def hint(self, need: NeedsHint) -> None:
        """Work a hint out (in the solver's process) and keep the answer for the dispatcher.
        RaceError ``unavailable`` if the solver is busy."""
        assert self.solver is not None
        address = need.address
        self.in_flight[address] = self.in_flight.get(address, 0) + 1
        try:
            answer = await self.solver.hint(need.game, need.seed, need.actions,
                                            f"{need.race}/{need.player}", secrets.randbits(32),
                                            client=address)
        except SolverBusy:
            raise RaceError("unavailable", "the solver is busy: ask again in a moment") from None
        finally:
            left = self.in_flight[address] - 1
            if left:
                self.in_flight[address] = left
            else:
                del self.in_flight[address]
        key = (need.race, need.player, need.seq)
        self.answers[key] = answer
        self.answers.move_to_end(key)
        while len(self.answers) > MAX_ANSWERS:
            self.answers.popitem(last=False)
