"""The event bus interface: how race events reach every connection that follows a race.

A :class:`Bus` has two operations. ``publish(race, event)`` never awaits and never blocks: an
implementation queues or delivers at once. ``subscribe(race, deliver)`` registers a synchronous
callback that is called once per event, in publish order; it must not block either (the server's
callback puts the event in the connection's bounded queue, or drops a connection that is too
slow). Events carry ``v`` (the race's event number) so a subscriber can see a gap and resync.

:class:`Event` caches its JSON and msgpack encodings, so an event that goes to a thousand
connections is encoded at most once per encoding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from solrace.net.raw_frames import frame
from solrace.protocol.codec import encode_json, encode_msgpack


class Viewer(Protocol):
    """A subscriber as routing sees it: the racer it is bound to in each race, and the races
    it follows with whether it wants the other racers' boards."""

    players: dict[str, str]
    follows: dict[str, bool]


class Event:
    """One outgoing message plus routing: ``to`` (only that racer's connections).

    JSON frames are kept as UTF-8 bytes and sent as text frames, so a fan-out to many
    connections encodes the message once.
    """

    __slots__ = ("_frames", "_json", "_msgpack", "data", "to", "urgent")

    def __init__(self, data: dict[str, Any], to: str | None = None, urgent: bool = False
                 ) -> None:
        self.data = data
        self.to = to
        #: Sent at the end of the loop turn even to a batch client (see Connection.send).
        self.urgent = urgent
        self._json: bytes | None = None
        self._msgpack: bytes | None = None
        self._frames: list[bytes | None] = [None, None]

    def encoded(self, binary: bool) -> bytes:
        """The frame payload for this event (msgpack, or UTF-8 JSON for a text frame),
        encoded once per encoding and cached."""
        if binary:
            if self._msgpack is None:
                if not self.data and self._json is not None:
                    self.data = json.loads(self._json)
                self._msgpack = encode_msgpack(self.data)
            return self._msgpack
        if self._json is None:
            self._json = encode_json(self.data)
        return self._json

    @classmethod
    def from_json(cls, payload: bytes, to: str | None = None) -> Event:
        """An event that arrives already encoded as JSON (from another process): sent as it
        is to JSON clients, decoded only for a msgpack client."""
        event = cls({}, to)
        event._json = payload
        return event

    def pick(self, viewer: Viewer, race: str) -> Event | None:
        """This event as ``viewer`` gets it: itself, or None if it is meant for another racer.
        (A :class:`~solrace.core.views.BoardViews` answers with the view for that viewer.)"""
        if self.to is None or viewer.players.get(race) == self.to:
            return self
        return None

    def frame(self, binary: bool) -> bytes:
        """The whole WebSocket frame carrying :meth:`encoded`, built once per encoding."""
        cached = self._frames[binary]
        if cached is None:
            cached = self._frames[binary] = frame(self.encoded(binary), binary)
        return cached


class Publishable(Protocol):
    """What goes on the bus: an :class:`Event`, or a set of views of one message."""

    to: str | None

    def pick(self, viewer: Viewer, race: str) -> Event | None: ...


Deliver = Callable[[Publishable], None]


class Subscription(Protocol):
    def cancel(self) -> None:
        """Stop delivery. Idempotent; safe to call from a callback."""

    def address(self, to: str | None) -> None:
        """Whom the subscriber speaks for on this race (a racer, or an arena's entrant; None:
        nobody): from now on, of the events addressed to someone (``to``), only his reach it.
        A subscriber that never says gets them all, to pick from."""


class Bus(Protocol):
    def publish(self, race: str, event: Publishable, remote: bool = True) -> None:
        """Hand ``event`` to every subscriber of ``race``. Never blocks. ``remote`` false:
        only to this process's subscribers (the other processes have it already)."""

    def subscribe(self, race: str, deliver: Deliver) -> Subscription:
        """Call ``deliver`` for every later event of ``race`` until cancelled."""

    async def close(self) -> None:
        """Release resources; later publishes are dropped."""
