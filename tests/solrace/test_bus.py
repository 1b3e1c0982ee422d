"""The in-memory bus and event encoding."""

from __future__ import annotations

import json

import msgpack
from solrace.bus.memory_bus import MemoryBus
from solrace.protocol.event import Event
from solrace.protocol.frames import frame


def test_publish_reaches_subscribers_in_order_and_survives_a_failing_one() -> None:
    bus = MemoryBus()
    got: list[tuple[str, int]] = []

    def broken(event: Event) -> None:
        raise RuntimeError("a broken connection")

    a = bus.subscribe("r", lambda e: got.append(("a", e.data["v"])))
    bus.subscribe("r", broken)
    bus.subscribe("r", lambda e: got.append(("c", e.data["v"])))
    bus.subscribe("other", lambda e: got.append(("x", e.data["v"])))
    bus.publish("r", Event({"v": 1}))
    a.cancel()
    a.cancel()  # idempotent
    bus.publish("r", Event({"v": 2}))
    assert got == [("a", 1), ("c", 1), ("c", 2)]
    assert bus.subscribers("r") == 2 and bus.subscribers("nobody") == 0


def test_a_subscriber_may_cancel_itself_during_delivery() -> None:
    bus = MemoryBus()
    seen: list[int] = []
    subs = []

    def once(event: Event) -> None:
        seen.append(event.data["v"])
        subs[0].cancel()

    subs.append(bus.subscribe("r", once))
    bus.publish("r", Event({"v": 1}))
    bus.publish("r", Event({"v": 2}))
    assert seen == [1] and bus.subscribers("r") == 0


def test_events_encode_once_per_encoding_into_whole_frames() -> None:
    event = Event({"type": "progress", "v": 3, "name": "Zoë"})
    assert event.encoded(False) is event.encoded(False)
    assert json.loads(event.encoded(False)) == event.data
    assert msgpack.unpackb(event.encoded(True)) == event.data
    assert event.frame(True) is event.frame(True)
    assert event.frame(False)[:2] == bytes((0x81, len(event.encoded(False))))
    big = frame(b"x" * 300, True)
    assert big[:4] == bytes((0x82, 126, 1, 44)) and len(big) == 304
    huge = frame(b"x" * 70_000, False)
    assert huge[:2] == bytes((0x81, 127)) and int.from_bytes(huge[2:10], "big") == 70_000
