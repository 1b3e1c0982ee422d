"""The dispatcher on its own: commands in, effects out, nothing awaited, nothing sent, no
store, no hub. Its world is a plain object holding races in dicts; randomness comes from a
seeded generator, so every id and token is the same at every run."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from solrace.core.effects import (
    EMIT,
    Bind,
    Effects,
    Follow,
    Later,
    NotLoaded,
    Reply,
    Snapshot,
    State,
)
from solrace.core.identity import Who
from solrace.core.quotas import Caps
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.core.tournament import Tournament
from solrace.protocol import codec, commands, dispatch

T0 = 1_800_000_000_000


class SeededEntropy:
    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.ids = itertools.count(1)

    def token(self) -> str:
        return f"token-{self.rng.getrandbits(64):x}"

    def salt(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def race_id(self) -> str:
        return f"race{next(self.ids)}"

    def tournament_id(self) -> str:
        return f"tour{next(self.ids)}"


class NoWinnableDeals:
    demo = False

    def ready(self, game: str) -> int:
        return 0

    def draw(self, game: str, winnable: bool = False) -> int:
        assert not winnable
        return 424242


@dataclass
class World:
    """A world the dispatcher reads: what a hub would hold, in plain dicts."""

    races: dict[str, Race] = field(default_factory=dict)
    finished: dict[str, Race] = field(default_factory=dict)
    tournaments: dict[str, Tournament] = field(default_factory=dict)
    reloading: set[str] = field(default_factory=set)
    writable: bool = True
    caps: Caps = field(default_factory=Caps)
    countdown_ms: int = 0
    claim_after_ms: int = 60_000
    deals: NoWinnableDeals = field(default_factory=NoWinnableDeals)
    entropy: SeededEntropy = field(default_factory=SeededEntropy)

    def hint_answer(self, race: str, player: str, seq: int) -> dict[str, Any] | None:
        return None

    def net(self, address: str) -> str:
        return f"net-of-{address}" if address else ""

    def hint_refusal(self, address: str) -> RaceError | None:
        return RaceError("unavailable", "no hints here")

    def entrants_from(self, tournament: str, address: str) -> int:
        return 0

    def can_play_bot(self, level: int) -> bool:
        return level <= 2  # no solver here

    def handle(self, session: Any, cmd: commands.Command, now: int) -> Effects:
        fx = dispatch.handle(self, session, cmd, now)
        if fx.created is not None:  # what the hub does with a new race
            self.races[fx.created.race] = fx.created
        return fx


class Session:
    count = 0

    def __init__(self, address: str = "10.0.0.1") -> None:
        Session.count += 1
        self.id = Session.count
        self.address = address
        self.players: dict[str, str] = {}
        self.seats: dict[str, str] = {}
        self.follows: dict[str, bool] = {}
        self.lean: set[str] = set()
        self.who: Who | None = None


@pytest.fixture
def hub() -> World:
    return World()


def test_create_then_join_then_move(hub: World) -> None:
    host, ann = Session(), Session()
    fx = hub.handle(host, commands.Create("yukon", players=1, seed=5, rid=1), T0)
    assert fx.created is fx.race and fx.barrier and fx.race is not None
    assert fx.race.seed == 5 and fx.race.seed_chosen
    [reply] = fx.steps
    assert isinstance(reply, Reply) and reply.msg["type"] == "created"
    assert reply.msg["seed_chosen"] is True and reply.msg["rid"] == 1
    race = fx.race
    hub.races[race.race] = race  # what Hub.run does for a created race

    fx = hub.handle(ann, commands.Join(race.race, name="ann", rid=2, bot=True), T0)
    assert fx.barrier and [o.log[0].kind for o in fx.outcomes] == ["join"]
    kinds = [type(step) for step in fx.steps]
    assert kinds == [type(EMIT), Bind, Follow, Reply, Snapshot]  # no state before the start
    assert race.racers["p1"].bot and fx.steps[3].msg["bot"] is True  # type: ignore[union-attr]
    ann.players[race.race] = "p1"  # what the Bind step does

    fx = hub.handle(host, commands.Start(race.race, race.host_token, rid=3), T0)
    assert [o.log[0].kind for o in fx.outcomes] == ["start"]
    assert race.status == "countdown" and race.due(T0)  # countdown 0: the start is due
    move = race.racers["p1"].game.legal_moves()[0].text()
    fx = hub.handle(ann, commands.MoveCmd(race.race, move, 1, rid=4), T0 + 1)
    assert not fx.barrier  # the reader goes on at once
    assert fx.outcomes[0].started  # the due start is recorded first, its timer late or not
    state, emit = fx.steps
    # The racer's state is built once the move's writes are on their way (Hub.run).
    assert isinstance(state, Later)
    built = state.build()
    assert built["type"] == "state" and built["seq"] == 1 and built["rid"] == 4
    assert emit is EMIT
    assert [e.kind for e in fx.outcomes[-1].events] == ["progress"]

    # Resuming with the token: the same racer, and its state since the race runs.
    again = Session()
    fx = hub.handle(again, commands.Join(race.race, token=race.racers["p1"].token), T0)
    assert fx.outcomes == [] and isinstance(fx.steps[-1], State)


def test_refused_commands_change_nothing(hub: World) -> None:
    s = Session()
    with pytest.raises(NotLoaded):
        hub.handle(s, commands.Watch("nope"), T0)
    fx = hub.handle(s, commands.Create("scotch", players=2), T0)
    race = fx.race
    assert race is not None and not race.seed_chosen
    hub.races[race.race] = race
    with pytest.raises(RaceError) as info:
        hub.handle(s, commands.MoveCmd(race.race, "t1>t2", 1), T0)
    assert info.value.code == "forbidden"
    with pytest.raises(RaceError):
        hub.handle(s, commands.Start(race.race, "not-the-host"), T0)
    assert race.v == 0 and race.status == "lobby" and not race.racers
    with pytest.raises(codec.ProtocolError):
        hub.handle(s, commands.Create("chess"), T0)


def test_nothing_is_written_while_the_store_is_unhealthy(hub: World) -> None:
    s = Session()
    fx = hub.handle(s, commands.Create("scotch", players=2), T0)
    race = fx.race
    assert race is not None
    hub.races[race.race] = race
    hub.writable = False
    with pytest.raises(RaceError) as info:
        hub.handle(s, commands.Join(race.race, name="ann"), T0)
    assert info.value.code == "unavailable" and not race.racers
    fx = hub.handle(s, commands.Watch(race.race), T0)  # reading still works
    assert isinstance(fx.steps[-1], Snapshot)


def test_a_move_after_the_time_limit_is_refused_and_the_end_is_recorded(hub: World) -> None:
    """The time limit passed but its timer has not fired: the move is refused, and the end of
    the race still goes into the effects (it used to be lost with the refusal)."""
    host, ann = Session(), Session()
    fx = hub.handle(host, commands.Create("scotch", players=1, time_limit=1, seed=5), T0)
    race = fx.race
    assert race is not None
    hub.races[race.race] = race
    hub.handle(ann, commands.Join(race.race, name="ann"), T0)
    ann.players[race.race] = "p1"
    hub.handle(host, commands.Start(race.race, race.host_token), T0)
    hub.handle(ann, commands.Ready(race.race), T0)  # the countdown (0) is due: start
    assert race.status == "running" and race.ends_at == T0 + 1000
    move = race.racers["p1"].game.legal_moves()[0].text()
    fx = hub.handle(ann, commands.MoveCmd(race.race, move, 1, rid=9), T0 + 1500)
    assert race.status == "finished" and race.reason == "time"
    assert [o.finished for o in fx.outcomes] == [True]
    emit, reply = fx.steps
    assert emit is EMIT and isinstance(reply, Reply)
    assert reply.msg == {"type": "error", "code": "race_not_running",
                         "message": "the race is finished", "rid": 9}
