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


def test_an_event_for_one_reaches_only_him_and_who_never_said() -> None:
    """An event addressed to one racer or player is offered only to the subscribers that speak
    for him, and to those that never said whom they speak for (a house bot); an arena's
    thousand followers are not each offered every entrant's seat."""
    bus = MemoryBus()
    got: list[tuple[str, int]] = []
    subs = {name: bus.subscribe("a", lambda e, name=name: got.append((name, e.data["v"])))
            for name in ("ann", "bob", "watcher", "bot")}
    subs["ann"].address("p-ann")
    subs["bob"].address("p-bob")
    subs["watcher"].address(None)
    bus.publish("a", Event({"v": 1}, to="p-ann"))
    bus.publish("a", Event({"v": 2}))
    assert got == [("ann", 1), ("bot", 1),
                   ("ann", 2), ("bob", 2), ("watcher", 2), ("bot", 2)]
    got.clear()
    subs["bob"].address("p-ann")  # another tab of Ann's, say
    subs["ann"].address(None)  # left the seat
    subs["bot"].cancel()
    bus.publish("a", Event({"v": 3}, to="p-ann"))
    bus.publish("a", Event({"v": 4}, to="p-bob"))
    assert got == [("bob", 3)]
    for sub in subs.values():
        sub.cancel()
    assert bus.subscribers("a") == 0 and not bus._to and not bus._unsaid


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


def test_a_fan_out_to_a_crowd_first_lets_the_replies_waiting_go() -> None:
    """Above CROWD subscribers, before_crowd runs before the first delivery (the connections
    then write the mover's reply before thousands of copies of his move); not for a race of
    a few followers, nor for an event that reaches one racer."""
    from solrace.settings import CROWD

    bus = MemoryBus()
    delivered: list[int] = []
    hooked: list[int] = []
    bus.before_crowd = lambda: hooked.append(len(delivered))
    for _ in range(CROWD):  # spectators: they speak for nobody, as their connections say
        bus.subscribe("r", lambda e: delivered.append(1)).address(None)
    bus.publish("r", Event({"v": 1}))
    assert hooked == [] and len(delivered) == CROWD
    bus.subscribe("r", lambda e: delivered.append(1)).address("p1")
    bus.publish("r", Event({"v": 2}))
    assert hooked == [CROWD] and len(delivered) == 2 * CROWD + 1
    bus.publish("r", Event({"type": "state"}, to="p1"))  # for him alone
    assert hooked == [CROWD] and len(delivered) == 2 * CROWD + 2


class Follower:
    """A connection of another process as the owner's bus sees it (a plain Viewer)."""

    def __init__(self, players: dict[str, str] | None = None) -> None:
        self.players = players or {}
        self.follows = {"r": True}


def test_remote_board_views_give_a_crowd_one_view_and_each_racer_his() -> None:
    """The owner publishes a board once per distinct view its remote followers may have: the
    outsiders' (thousands of spectators share it, picked once) as the default, a racer's
    under his seat."""
    from redis.asyncio import Redis
    from solrace.bus.redis_bus import RedisBus
    from solrace.core.race import Race
    from solrace.core.race_parts import Options
    from solrace.core.views import RACERS, SPECTATORS
    from solrace.protocol import internal
    from solrace.protocol.board_views import BoardViews

    race = Race("r", "yukon", 3, "salt", Options(2, 600, True), 0, "host", 0)
    for i in range(2):
        race.join(f"racer{i}", f"token{i}", 0)
    race.start("host", 0)
    race.tick(0)
    bus = RedisBus(Redis(), "owner")  # nothing is sent: payload() only encodes
    bus.remote_followers = lambda r: [*(Follower() for _ in range(500)), Follower({"r": "p2"})]
    bus.races = lambda r: race
    sent = [BoardViews(race, "p1", SPECTATORS), BoardViews(race, "p1", RACERS)]
    wires = msgpack.unpackb(bus.payload("r", sent), raw=False)
    spectators, racers = (internal.read_envelope(w) for w in wires)
    assert isinstance(spectators, internal.BoardEnvelope)
    assert isinstance(racers, internal.BoardEnvelope)
    outsiders = sent[0].pick(Follower(), "r")
    assert outsiders is not None
    assert spectators.payloads == [outsiders.encoded(False)] and spectators.default == 0
    assert spectators.keys == {}  # the racer p2 gets the racers' view, not this one
    to_p2 = sent[1].pick(Follower({"r": "p2"}), "r")
    assert to_p2 is not None
    assert racers.payloads == [to_p2.encoded(False)] and racers.keys == {"r/p2": 0}
    assert racers.default is None
