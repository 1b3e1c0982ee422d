"""The home page's live figures: which races may be featured and which one is (pure), the
answer kept between looks, and ``GET /api/live`` over real WebSockets on one process — players
counted once per person, a rated race of strong accounts featured over a casual guests' race,
the next race featured when it ends, and the daily deal never featured."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from solrace.core import showcase
from solrace.core.levels import LEVELS
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.service.showcase import Local, Showcase, Totals, visitor_id
from solrace.settings import LIVE_EVERY_S

from tests.solrace.conftest import Server, T
from tests.solrace.test_accounts import aget
from tests.solrace.test_fair_queues import player_id, set_rating
from tests.solrace.test_play import Clock, account, named, sit, visitor

T0 = 1_000_000
SEEK = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}


def racing(rid: str, ratings: tuple[int | None, ...] = (1500, 1500), *, kind: str | None = None,
           public: bool = False, day: str | None = None, bots: tuple[int, ...] = (),
           levels: dict[int, int] | None = None, started: int = 0) -> Race:
    """A running race of ``len(ratings)`` racers with those shown ratings (None: anonymous);
    the racers at ``bots`` are bots (a house bot with its level in ``levels``)."""
    options = Options(max(2, len(ratings)), 600, True, public=public, kind=kind, day=day)
    race = Race(rid, "scotch", 7, "salt", options, T0, "host", 1000)
    for i, rating in enumerate(ratings):
        race.join(f"R{i}", f"t{i}", T0, bot=i in bots, pid=None if rating is None else f"id{i}",
                  rating=rating, level=(levels or {}).get(i))
    race.start("host", T0 + started)
    race.tick(T0 + started + 1000)
    assert race.status == "running"
    return race


def no_tournament(tid: str) -> bool:
    return False


def test_what_may_be_featured() -> None:
    ok = showcase.featurable
    assert ok(racing("pub", public=True), no_tournament)
    assert ok(racing("q", kind="quick"), no_tournament)
    assert ok(racing("b", kind="bot", bots=(1,), levels={1: 3}), no_tournament)
    assert ok(racing("a", kind="arena"), no_tournament)
    # A race for friends, shared by its link: not shown to strangers.
    assert not ok(racing("private"), no_tournament)
    # The daily deal's deal is secret until the day is over (nobody may watch it), even with
    # two racers in it, even were it listed.
    daily = racing("d", kind="daily", day="2026-12-05", public=True)
    assert daily.deal.held_until is not None and not ok(daily, no_tournament)
    # One racer is not a race to watch; nor one not running yet, nor one nobody races in.
    assert not ok(racing("one", (1500,), kind="quick"), no_tournament)
    lobby = Race("l", "scotch", 7, "salt", Options(2, 600, True, kind="quick"), T0, "host", 1000)
    lobby.join("A", "t0", T0)
    lobby.join("B", "t1", T0)
    assert not ok(lobby, no_tournament)
    done = racing("done", (1500, 1500, 1500), kind="quick")
    for p in done.racers:
        done.racers[p].resigned = True
    assert not ok(done, no_tournament)
    # A tournament's round: when the tournament takes entrants without a code.
    rnd = racing("T-1")
    rnd.tournament = {"tournament": "T", "name": "Friday Cup", "round": 1}
    assert ok(rnd, lambda tid: tid == "T")
    assert not ok(rnd, no_tournament)


def test_which_race_is_featured() -> None:
    # The highest mean of the shown ratings.
    strong = racing("strong", (2000, 1900), kind="quick")
    casual = racing("casual", (1500, 1500), kind="quick")
    lopsided = racing("lopsided", (2300, 1200), kind="quick")  # 1750: not a close race
    assert showcase.best([casual, lopsided, strong], no_tournament) is strong
    # Anonymous racers count as newcomers (1500); eight of them are not strong players.
    crowd = racing("crowd", (None,) * 8, public=True)
    assert showcase.best([crowd, lopsided], no_tournament) is lopsided
    # People before the house's bots, even the Ace: 2200 against a player of 2100.
    ace = racing("ace", (2100, None), kind="bot", bots=(1,), levels={1: 5})
    assert showcase.rank(ace)[1] == round((2100 + LEVELS[5].rating) / 2 * 10)
    assert showcase.best([ace, casual], no_tournament) is casual
    assert showcase.best([ace], no_tournament) is ace
    # Equal ratings: more racers, then the race that started last (more of it to watch),
    # then the id (every process picks the same).
    three = racing("three", (1500, 1500, 1500), kind="quick")
    assert showcase.best([casual, three], no_tournament) is three
    later = racing("later", (1500, 1500), kind="quick", started=5000)
    assert showcase.best([casual, later], no_tournament) is later
    twin = racing("twin", (1500, 1500), kind="quick")
    assert showcase.best([twin, casual], no_tournament) is twin
    assert showcase.best([casual, twin], no_tournament) is twin
    # Nothing to feature: None; the daily deal is counted as running, never featured.
    daily = racing("d", kind="daily", day="2026-12-05")
    assert showcase.best([daily, racing("private")], no_tournament) is None
    assert showcase.running([daily, casual]) == 2


def test_the_featured_view_says_who_races() -> None:
    race = racing("q", (2000, None), kind="quick")
    race.options = Options(2, 300, True, kind="quick", rated=True)
    view = showcase.featured_view(race)
    assert view["race"] == "q" and view["game"] == "scotch" and view["rated"] is True
    assert view["kind"] == "quick" and view["ends_at"] == race.ends_at
    first, second = view["racers"]
    assert first["name"] == "R0" and first["id"] == "id0" and first["rating"] == 2000
    assert "id" not in second and "rating" not in second and second["bot"] is False
    assert first["progress"] == {"foundation": race.racers["p1"].game.progress()[0],
                                 "total": 52, "moves": 0}
    json.dumps(view)  # goes on the wire as it is


def test_a_visitor_is_a_player_a_browser_or_a_connection() -> None:
    assert visitor_id(1, "k", "pid") == "p:pid"
    assert visitor_id(1, "k", None) == "k:k"
    assert visitor_id(1, None, None) == "c:1"
    assert len({visitor_id(1, "x", None), visitor_id(2, None, None), visitor_id(3, None, "x")}) == 3


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_answer_is_kept_between_looks() -> None:
    """A crowd asking costs one look per LIVE_EVERY_S, whatever its size."""
    races: list[Race] = [racing("q", kind="quick")]
    ticks = Ticks()
    live = Showcase(lambda: races, lambda: ["p:a", "p:a", "k:b"], no_tournament,
                    clock=lambda: 42, monotonic=ticks)
    first = live.answer()
    assert first == {"players_online": 2, "races_running": 1, "at": 42,
                     "featured": showcase.featured_view(races[0])}
    races.clear()
    for _ in range(100):
        assert live.answer() is first
    assert live.looks == 1
    ticks.now += LIVE_EVERY_S
    assert live.answer() == {"players_online": 2, "races_running": 0, "featured": None,
                             "at": 42}
    assert live.looks == 2


async def test_with_several_processes_the_shared_figures_are_answered() -> None:
    class Failing:
        def __init__(self) -> None:
            self.fail = False

        async def exchange(self, local: Local) -> Totals:
            if self.fail:
                raise ConnectionError("Redis is down")
            return Totals(len(local.visitors) + 10, local.races + 5, None)

        async def leave(self) -> None:
            pass

    live = Showcase(lambda: [racing("q", kind="quick")], lambda: ["p:a"], no_tournament,
                    clock=lambda: 7, monotonic=Ticks())
    shared = Failing()
    live.shared = shared
    assert (await live.exchange())["players_online"] == 11
    assert live.answer()["races_running"] == 6  # the exchange's, not a look of its own
    assert live.looks == 1
    shared.fail = True  # Redis does not answer: this process's own figures meanwhile
    own = await live.exchange()
    assert own["players_online"] == 1 and own["races_running"] == 1
    assert own["featured"]["race"] == "q"


# ------------------------------------------------------------------ over real sockets
async def live(srv: Server) -> dict[str, Any]:
    status, _, body = await aget(srv, "/api/live")
    assert status == 200
    return dict(json.loads(body))


async def live_until(srv: Server, ok: Callable[[dict[str, Any]], bool],
                     timeout: float = T * 2) -> dict[str, Any]:
    """``GET /api/live`` until its answer satisfies ``ok`` (it is a look at most
    LIVE_EVERY_S old), or fail with the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = await live(srv)
        if ok(answer):
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"never came: {answer}")
        await asyncio.sleep(0.2)


def featured(answer: dict[str, Any]) -> str | None:
    f = answer["featured"]
    return None if f is None else str(f["race"])


async def test_players_online_races_running_and_the_featured_race(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    nobody = await live(srv)
    assert nobody["players_online"] == 0 and nobody["races_running"] == 0
    assert nobody["featured"] is None
    # Two guests race casually: the only race, featured.
    cat, dan = await named(srv, "Cat"), await named(srv, "Dan")
    assert (await cat.request(SEEK))["type"] == "seeking"
    paired = await dan.request(SEEK)
    assert paired["type"] == "paired" and paired["rated"] is False
    guests = await sit(dan, paired)
    await sit(cat, await cat.next_event("paired", timeout=T))
    await dan.wait_state(guests, T)
    answer = await live_until(srv, lambda a: a["races_running"] == 1)
    assert featured(answer) == guests and answer["players_online"] == 2
    assert {r["name"] for r in answer["featured"]["racers"]} == {"Cat", "Dan"}
    # Two strong accounts race rated: theirs is featured now.
    ann, ann_key = await visitor(srv)
    await ann.request({"type": "set_name", "name": "Ann"})
    await ann.request({"type": "set_password", "password": "Ann password"})
    bob = await account(srv, "Bob")
    set_rating(srv, await player_id(ann), "scotch", 2010.0)
    set_rating(srv, await player_id(bob), "scotch", 1990.0)
    assert (await ann.request(SEEK))["type"] == "seeking"
    paired = await bob.request(SEEK)
    assert paired["rated"] is True
    strong = await sit(bob, paired)
    await sit(ann, await ann.next_event("paired", timeout=T))
    await bob.wait_state(strong, T)
    answer = await live_until(srv, lambda a: a["races_running"] == 2)
    assert featured(answer) == strong and answer["featured"]["rated"] is True
    assert sorted(r["rating"] for r in answer["featured"]["racers"]) == [1990, 2010]
    # A player is one visitor on all his tabs; a browser one on its tabs, before it is a
    # player too; a client without the cookie is one per connection.
    await srv.client(additional_headers={"Cookie": f"sr_player={ann_key}"})
    eve, key = await visitor(srv)
    await srv.client(additional_headers={"Cookie": f"sr_player={key}"})
    await eve.request({"type": "set_name", "name": "Eve"})  # a player: the other tab is her
    await srv.client()
    await srv.client()
    answer = await live_until(srv, lambda a: a["players_online"] != 4)
    assert answer["players_online"] == 4 + 1 + 2
    # The featured race ends: the next one is featured.
    await ann.resign(strong)
    await bob.next_event("race_over", timeout=T)
    answer = await live_until(srv, lambda a: a["races_running"] == 1)
    assert featured(answer) == guests


async def test_the_daily_deal_is_never_featured(play_solving: tuple[Server, Clock]) -> None:
    srv, _ = play_solving
    ann = await account(srv, "Ann")
    set_rating(srv, await player_id(ann), "scotch", 2400.0)
    # The first daily deal of a server is solved when asked for: a loaded machine takes a while.
    daily = await ann.request({"type": "daily", "game": "scotch"}, timeout=T * 12)
    race = await sit(ann, daily)
    await ann.wait_state(race, T)
    answer = await live_until(srv, lambda a: a["races_running"] == 1)
    assert answer["featured"] is None and answer["players_online"] == 1


@pytest.fixture
async def play(tmp_path: Any) -> Any:
    from tests.solrace.test_play import playing

    async for served in playing(tmp_path):
        yield served


@pytest.fixture
async def play_solving(tmp_path: Any) -> Any:
    from solrace.solver.jobs import Solver

    from tests.solrace.test_play import playing

    async for served in playing(tmp_path, Solver(hint_seconds=0, par_seconds=5.0, nice=0)):
        yield served
