"""The event bus interface: how race events reach every connection that follows a race.

A :class:`Bus` has two operations. ``publish(race, event)`` never awaits and never blocks: an
implementation queues or delivers at once. ``subscribe(race, deliver)`` registers a synchronous
callback that is called once per event, in publish order; it must not block either (the server's
callback puts the event in the connection's bounded queue, or drops a connection that is too
slow). Events carry ``v`` (the race's event number) so a subscriber can see a gap and resync.
What is published (:class:`~solrace.protocol.event.Event`, encoded once for every subscriber,
or a set of views) is the protocol's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from solrace.protocol.event import Publishable

Deliver = Callable[[Publishable], None]


class Subscription(Protocol):
    def cancel(self) -> None:
        """Stop delivery. Idempotent; safe to call from a callback."""

    def address(self, to: str | None) -> None:
        """Whom the subscriber speaks for on this race (a racer, or an arena's entrant; None:
        nobody): from now on, of the events addressed to someone (``to``), only his reach it.
        A subscriber that never says gets them all, to pick from."""


class Bus(Protocol):
    #: Called before a fan-out to a crowd of this process's subscribers (the connections'
    #: replies waiting go first: solrace.bus.memory_bus).
    before_crowd: Callable[[], None] | None

    def publish(self, race: str, event: Publishable, remote: bool = True) -> None:
        """Hand ``event`` to every subscriber of ``race``. Never blocks. ``remote`` false:
        only to this process's subscribers (the other processes have it already)."""

    def subscribe(self, race: str, deliver: Deliver) -> Subscription:
        """Call ``deliver`` for every later event of ``race`` until cancelled."""

    async def close(self) -> None:
        """Release resources; later publishes are dropped."""
