"""One outgoing message, encoded once for every connection that gets it.

:class:`Event` caches its JSON and msgpack encodings and their WebSocket frames, so an event
that goes to a thousand connections is encoded at most once per encoding; it carries its
routing (``to``: only that racer's connections). :class:`Publishable` is what goes on a race's
bus (:mod:`solrace.bus.base`): an event, or a set of views of one message
(:class:`~solrace.protocol.board_views.BoardViews`) from which each follower picks his own.
Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from solrace.protocol.codec import encode_json, encode_msgpack
from solrace.protocol.frames import frame


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
        (A :class:`~solrace.protocol.board_views.BoardViews` answers with the view for that
        viewer.)"""
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
