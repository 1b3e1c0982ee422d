"""In-process :class:`~solrace.bus.base.Bus`: publish calls every subscriber synchronously.

Good for one server process. A subscriber that raises is logged and skipped, so one broken
connection can never stop an event from reaching the others.

An event addressed to one racer or player (``to``: a racer's ``state``, an arena entrant's seat
or row) goes only to the subscribers that said they speak for him (:meth:`_Subscription.address`,
as a connection does when it is bound), and to those that never said whom they speak for (they
pick for themselves): an arena's thousand followers are not each offered every entrant's seat.

Before an event goes to more than ``CROWD`` subscribers, :attr:`MemoryBus.before_crowd` (the
connections' :meth:`~solrace.net.connection.Output.express`) writes the direct replies waiting:
the racer whose move it is gets his answer before thousands of spectators get their copies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from solrace.bus.base import Deliver
from solrace.protocol.event import Publishable
from solrace.settings import CROWD

log = logging.getLogger(__name__)


class _Subscription:
    __slots__ = ("bus", "deliver", "race", "said", "to")

    def __init__(self, bus: MemoryBus, race: str, deliver: Deliver) -> None:
        self.bus = bus
        self.race = race
        self.deliver = deliver
        self.said = False  # has it said whom it speaks for?
        self.to: str | None = None

    def address(self, to: str | None) -> None:
        """From now on the events addressed to ``to`` (None: to nobody) reach this
        subscriber, with every event for everyone; the others addressed to someone do not."""
        bus = self.bus
        if self.race not in bus._subs or (self.said and self.to == to):
            return  # cancelled, or nothing changes
        bus._forget_address(self)
        self.said, self.to = True, to
        if to is not None:
            bus._to.setdefault(self.race, {}).setdefault(to, {})[self] = None

    def cancel(self) -> None:
        subs = self.bus._subs.get(self.race)
        if subs is not None and self in subs:
            self.bus._forget_address(self)
            del subs[self]
            if not subs:
                del self.bus._subs[self.race]


class MemoryBus:
    def __init__(self) -> None:
        # dict as an ordered set: delivery follows subscription order, removal is O(1).
        self._subs: dict[str, dict[_Subscription, None]] = {}
        #: Per race, the subscribers that speak for a racer or player, by him; and those that
        #: never said (they get the events addressed to anyone, to pick from).
        self._to: dict[str, dict[str, dict[_Subscription, None]]] = {}
        self._unsaid: dict[str, dict[_Subscription, None]] = {}
        self._closed = False
        #: Called before a fan-out to more than ``CROWD`` subscribers (see the module).
        self.before_crowd: Callable[[], None] | None = None

    def publish(self, race: str, event: Publishable, remote: bool = True) -> None:
        if self._closed:
            return
        subs = self._subs.get(race)
        if not subs:
            return
        to = event.to
        if to is None:
            targets = list(subs)  # a callback may cancel subscriptions
        else:
            targets = [*self._to.get(race, {}).get(to, ()), *self._unsaid.get(race, ())]
        if len(targets) > CROWD and self.before_crowd is not None:
            self.before_crowd()
        for sub in targets:
            try:
                sub.deliver(event)
            except Exception:
                log.exception("subscriber of race %s failed", race)

    def subscribe(self, race: str, deliver: Deliver) -> _Subscription:
        sub = _Subscription(self, race, deliver)
        self._subs.setdefault(race, {})[sub] = None
        self._unsaid.setdefault(race, {})[sub] = None
        return sub

    def _forget_address(self, sub: _Subscription) -> None:
        race = sub.race
        if not sub.said:
            unsaid = self._unsaid.get(race)
            if unsaid is not None:
                unsaid.pop(sub, None)
                if not unsaid:
                    del self._unsaid[race]
        elif sub.to is not None:
            by_to = self._to.get(race, {})
            mine = by_to.get(sub.to)
            if mine is not None:
                mine.pop(sub, None)
                if not mine:
                    del by_to[sub.to]
                    if not by_to:
                        del self._to[race]

    def subscribers(self, race: str) -> int:
        return len(self._subs.get(race, ()))

    async def close(self) -> None:
        self._closed = True
        self._subs.clear()
        self._to.clear()
        self._unsaid.clear()
