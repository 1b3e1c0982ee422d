"""In-process :class:`~solrace.bus.base.Bus`: publish calls every subscriber synchronously.

Good for one server process. A subscriber that raises is logged and skipped, so one broken
connection can never stop an event from reaching the others.
"""

from __future__ import annotations

import logging

from solrace.bus.base import Deliver
from solrace.protocol.event import Publishable

log = logging.getLogger(__name__)


class _Subscription:
    __slots__ = ("bus", "deliver", "race")

    def __init__(self, bus: MemoryBus, race: str, deliver: Deliver) -> None:
        self.bus = bus
        self.race = race
        self.deliver = deliver

    def cancel(self) -> None:
        subs = self.bus._subs.get(self.race)
        if subs is not None:
            subs.pop(self, None)
            if not subs:
                del self.bus._subs[self.race]


class MemoryBus:
    def __init__(self) -> None:
        # dict as an ordered set: delivery follows subscription order, removal is O(1).
        self._subs: dict[str, dict[_Subscription, None]] = {}
        self._closed = False

    def publish(self, race: str, event: Publishable, remote: bool = True) -> None:
        if self._closed:
            return
        subs = self._subs.get(race)
        if not subs:
            return
        for sub in list(subs):  # a callback may cancel subscriptions
            try:
                sub.deliver(event)
            except Exception:
                log.exception("subscriber of race %s failed", race)

    def subscribe(self, race: str, deliver: Deliver) -> _Subscription:
        sub = _Subscription(self, race, deliver)
        self._subs.setdefault(race, {})[sub] = None
        return sub

    def subscribers(self, race: str) -> int:
        return len(self._subs.get(race, ()))

    async def close(self) -> None:
        self._closed = True
        self._subs.clear()
