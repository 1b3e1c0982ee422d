"""The dispatcher on its own: commands in, effects out, nothing awaited, nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from solrace.bus.memory_bus import MemoryBus
from solrace.core.dispatch import (
    EMIT,
    Bind,
    Follow,
    NotLoaded,
    Reply,
    Snapshot,
    State,
)
from solrace.core.race import RaceError
from solrace.protocol import codec
from solrace.service.hub import Hub
from solrace.store.sqlite_store import SQLiteStore

T0 = 1_800_000_000_000


class Session:
    count = 0

    def __init__(self, address: str = "10.0.0.1") -> None:
        Session.count += 1
        self.id = Session.count
        self.address = address
        self.players: dict[str, str] = {}
        self.seats: dict[str, str] = {}
        self.follows: dict[str, bool] = {}


@pytest.fixture
def hub(tmp_path: Path) -> Hub:
    return Hub(SQLiteStore(tmp_path / "d.db"), MemoryBus(), lambda: T0, countdown=0)


def test_create_then_join_then_move(hub: Hub) -> None:
    host, ann = Session(), Session()
    fx = hub.dispatcher.handle(host, codec.Create("yukon", players=1, seed=5, rid=1), T0)
    assert fx.created is fx.race and fx.barrier and fx.race is not None
    assert fx.race.seed == 5 and fx.race.seed_chosen
    [reply] = fx.steps
    assert isinstance(reply, Reply) and reply.msg["type"] == "created"
    assert reply.msg["seed_chosen"] is True and reply.msg["rid"] == 1
    race = fx.race
    hub.races[race.race] = race  # what Hub.run does for a created race

    fx = hub.dispatcher.handle(ann, codec.Join(race.race, name="ann", rid=2, bot=True), T0)
    assert fx.barrier and [o.log[0].kind for o in fx.outcomes] == ["join"]
    kinds = [type(step) for step in fx.steps]
    assert kinds == [type(EMIT), Bind, Follow, Reply, Snapshot]  # no state before the start
    assert race.racers["p1"].bot and fx.steps[3].msg["bot"] is True  # type: ignore[union-attr]
    ann.players[race.race] = "p1"  # what the Bind step does

    fx = hub.dispatcher.handle(host, codec.Start(race.race, race.host_token, rid=3), T0)
    assert [o.log[0].kind for o in fx.outcomes] == ["start"]
    assert race.status == "countdown" and race.due(T0)  # countdown 0: the start is due
    move = race.racers["p1"].game.legal_moves()[0].text()
    fx = hub.dispatcher.handle(ann, codec.MoveCmd(race.race, move, 1, rid=4), T0 + 1)
    assert not fx.barrier  # the reader goes on at once
    assert fx.outcomes[0].started  # the due start is recorded first, its timer late or not
    state, emit = fx.steps
    assert isinstance(state, Reply) and state.msg["type"] == "state"
    assert state.msg["seq"] == 1 and state.msg["rid"] == 4 and emit is EMIT
    assert [e.kind for e in fx.outcomes[-1].events] == ["progress"]

    # Resuming with the token: the same racer, and its state since the race runs.
    again = Session()
    fx = hub.dispatcher.handle(again, codec.Join(race.race, token=race.racers["p1"].token), T0)
    assert fx.outcomes == [] and isinstance(fx.steps[-1], State)


def test_refused_commands_change_nothing(hub: Hub) -> None:
    s = Session()
    with pytest.raises(NotLoaded):
        hub.dispatcher.handle(s, codec.Watch("nope"), T0)
    fx = hub.dispatcher.handle(s, codec.Create("scotch", players=2), T0)
    race = fx.race
    assert race is not None and not race.seed_chosen
    hub.races[race.race] = race
    with pytest.raises(RaceError) as info:
        hub.dispatcher.handle(s, codec.MoveCmd(race.race, "t1>t2", 1), T0)
    assert info.value.code == "forbidden"
    with pytest.raises(RaceError):
        hub.dispatcher.handle(s, codec.Start(race.race, "not-the-host"), T0)
    assert race.v == 0 and race.status == "lobby" and not race.racers
    with pytest.raises(codec.ProtocolError):
        hub.dispatcher.handle(s, codec.Create("chess"), T0)


def test_nothing_is_written_while_the_store_is_unhealthy(hub: Hub) -> None:
    s = Session()
    fx = hub.dispatcher.handle(s, codec.Create("scotch", players=2), T0)
    race = fx.race
    assert race is not None
    hub.races[race.race] = race
    hub.store._healthy = False  # type: ignore[attr-defined]
    with pytest.raises(RaceError) as info:
        hub.dispatcher.handle(s, codec.Join(race.race, name="ann"), T0)
    assert info.value.code == "unavailable" and not race.racers
    fx = hub.dispatcher.handle(s, codec.Watch(race.race), T0)  # reading still works
    assert isinstance(fx.steps[-1], Snapshot)


def test_a_move_after_the_time_limit_is_refused_and_the_end_is_recorded(hub: Hub) -> None:
    """The time limit passed but its timer has not fired: the move is refused, and the end of
    the race still goes into the effects (it used to be lost with the refusal)."""
    host, ann = Session(), Session()
    fx = hub.dispatcher.handle(host, codec.Create("scotch", players=1, time_limit=1, seed=5), T0)
    race = fx.race
    assert race is not None
    hub.races[race.race] = race
    hub.dispatcher.handle(ann, codec.Join(race.race, name="ann"), T0)
    ann.players[race.race] = "p1"
    hub.dispatcher.handle(host, codec.Start(race.race, race.host_token), T0)
    hub.dispatcher.handle(ann, codec.Ready(race.race), T0)  # the countdown (0) is due: start
    assert race.status == "running" and race.ends_at == T0 + 1000
    move = race.racers["p1"].game.legal_moves()[0].text()
    fx = hub.dispatcher.handle(ann, codec.MoveCmd(race.race, move, 1, rid=9), T0 + 1500)
    assert race.status == "finished" and race.reason == "time"
    assert [o.finished for o in fx.outcomes] == [True]
    emit, reply = fx.steps
    assert emit is EMIT and isinstance(reply, Reply)
    assert reply.msg == {"type": "error", "code": "race_not_running",
                         "message": "the race is finished", "rid": 9}
