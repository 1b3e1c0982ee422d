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

import struct
from collections.abc import Callable
from typing import Any, Protocol

from .codec import encode_json, encode_msgpack


def frame(payload: bytes, binary: bool) -> bytes:
    """A whole unmasked, unfragmented WebSocket data frame (RFC 6455 section 5.2), as a server
    sends it: the same bytes for every recipient, so it is built once per event."""
    opcode = 0x82 if binary else 0x81  # FIN + binary / text
    n = len(payload)
    if n < 126:
        header = bytes((opcode, n))
    elif n < 1 << 16:
        header = struct.pack("!BBH", opcode, 126, n)
    else:
        header = struct.pack("!BBQ", opcode, 127, n)
    return header + payload


class Event:
    """One outgoing message plus routing: ``to`` (only that racer's connections)."""

    __slots__ = ("_frames", "_json", "_msgpack", "board", "data", "to")

    #: JSON frames are kept as UTF-8 bytes and sent as text frames (``text=True``), so a
    #: fan-out to many connections encodes the string once.

    def __init__(
        self, data: dict[str, Any], to: str | None = None, board: str | None = None
    ) -> None:
        self.data = data
        self.to = to
        # A `board` view: for whom ("spectators" or "racers", see App.send_boards).
        self.board = board
        self._json: bytes | None = None
        self._msgpack: bytes | None = None
        self._frames: list[bytes | None] = [None, None]

    def encoded(self, binary: bool) -> bytes:
        """The frame payload for this event (msgpack, or UTF-8 JSON for a text frame),
        encoded once per encoding and cached."""
        if binary:
            if self._msgpack is None:
                self._msgpack = encode_msgpack(self.data)
            return self._msgpack
        if self._json is None:
            self._json = encode_json(self.data)
        return self._json

    def frame(self, binary: bool) -> bytes:
        """The whole WebSocket frame carrying :meth:`encoded`, built once per encoding."""
        cached = self._frames[binary]
        if cached is None:
            cached = self._frames[binary] = frame(self.encoded(binary), binary)
        return cached


Deliver = Callable[[Event], None]


class Subscription(Protocol):
    def cancel(self) -> None:
        """Stop delivery. Idempotent; safe to call from a callback."""


class Bus(Protocol):
    def publish(self, race: str, event: Event) -> None:
        """Hand ``event`` to every subscriber of ``race``. Never blocks."""

    def subscribe(self, race: str, deliver: Deliver) -> Subscription:
        """Call ``deliver`` for every later event of ``race`` until cancelled."""

    async def close(self) -> None:
        """Release resources; later publishes are dropped."""
