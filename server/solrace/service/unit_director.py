"""What the organizer (tournaments) and the arena director share: each carries out what its
units decide through the hub's commit-then-emit path, and neither knows the hub.

A :class:`UnitDirector` is given the store it writes to, the bus's publish, the clock, the
deals, the countdown of the races it makes and :class:`RacePorts`, the few things it asks of
whoever holds the races. It writes a unit's outcome (its log entries, its end) in the commit
of whatever made it, and an outcome nobody asked for (a timer's, a race's result) is made
durable, then sent (:meth:`UnitDirector.record`). Its timers fire
:meth:`UnitDirector._on_deadline` with the unit's id."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from solrace.core.arena import Arena
from solrace.core.race import Race
from solrace.core.race_parts import Outcome
from solrace.core.tournament import Tournament, TOutcome
from solrace.protocol.event import Event
from solrace.service.entropy import SecretEntropy
from solrace.service.timers import Deadlines
from solrace.solver.deal_source import DealSource
from solrace.store.base import Store

U = TypeVar("U", Tournament, Arena)


@dataclass(frozen=True)
class RacePorts:
    """What a director asks of whoever holds the races (the hub)."""

    #: A race held here, or None.
    get: Callable[[str], Race | None]
    #: Hold a new race from now on, and store it with the next commit.
    hold: Callable[[Race], None]
    #: Make an outcome of a race durable, then send it.
    record: Callable[[Race, Outcome], None]
    #: Set a race's timer for its next deadline.
    arm: Callable[[Race], None]
    #: Do this many more races fit (outside the part of the cap kept for single players)?
    room: Callable[[int], bool]
    #: Play the house bots seated in a new race (a host added them to the tournament).
    play_bots: Callable[[Race], None] = lambda race: None


class UnitDirector(Generic[U]):
    """See the module docstring; :meth:`queue`, :meth:`emit` and :meth:`_on_deadline` are
    each kind's own."""

    def __init__(self, store: Store, publish: Callable[[str, Event], None],
                 clock: Callable[[], int], deals: DealSource, countdown_ms: int,
                 races: RacePorts) -> None:
        self.store = store
        self.publish = publish
        self.clock = clock
        self.deals = deals
        self.countdown_ms = countdown_ms
        self.races = races
        self.entropy = SecretEntropy()
        self.deadlines = Deadlines(clock, self._on_deadline)

    def queue(self, t: U, out: TOutcome, now: int) -> None:
        """Queue ``out``'s writes (and the races it makes) for the next commit."""
        raise NotImplementedError

    def emit(self, t: U, out: TOutcome) -> None:
        """Send a committed outcome."""
        raise NotImplementedError

    def _on_deadline(self, tid: str) -> None:
        raise NotImplementedError

    def _write_log(self, t: U, out: TOutcome) -> None:
        """Queue the unit's own writes of ``out``: its log entries, its end."""
        if out.log:
            self.store.append_tournament(out.log)
        if out.finished and t.finished_at is not None:
            self.store.mark_tournament_finished(t.tid, t.finished_at)

    def record(self, t: U, out: TOutcome) -> None:
        """Make an outcome nobody asked for (a timer's, a race's result) durable, then send
        it."""
        self.queue(t, out, self.clock())
        self.store.after_commit(lambda: self.emit(t, out))

    def close(self) -> None:
        self.deadlines.close()
