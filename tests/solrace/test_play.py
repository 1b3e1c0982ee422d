"""One click to a race, over real WebSockets: quick-race pairing, the house's bots, ratings
scored exactly once (also by the next process when the first died), the daily deal kept
secret until its day is over."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import solrules
from solrace.core import daily as calendar
from solrace.net.app import App, now_ms
from solrace.solver.jobs import Solver
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server, T, serving
from tests.solrace.test_accounts import aget, key_of


def seed_with_home_move() -> int:
    """A Scotch deal whose first player can send a card home at once."""
    for seed in range(1, 1000):
        if any(">f" in m.text() for m in solrules.new_game("scotch", seed).legal_moves()):
            return seed
    raise AssertionError("no such deal")


class Clock:
    """The server's clock, which a test may move forward."""

    def __init__(self) -> None:
        self.offset = 0

    def __call__(self) -> int:
        return int(time.time() * 1000) + self.offset

    def forward(self, ms: int, app: App) -> None:
        """Move the clock ``ms`` on, as if that time had passed: the races' timers, armed on
        the event loop's own clock, are armed again."""
        self.offset += ms
        hub = app.hub
        for race in list(hub.races.values()):
            hub.deadlines.cancel(race.race)
            hub.arm(race)


def app_for(tmp_path: Path, clock: Clock | None = None, solver: Solver | None = None) -> App:
    """A server on ``tmp_path`` that deals one known deal, and takes each client's address
    from ``X-Forwarded-For`` (every test client comes from 127.0.0.1: the rated queues never
    pair two seekers of one network)."""
    store = SQLiteStore(tmp_path / "race.db")
    client_dir = tmp_path / "client"
    client_dir.mkdir(exist_ok=True)
    (client_dir / "index.html").write_text("<!doctype html><title>solrace</title>")
    app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=client_dir,
              clock=clock or now_ms, trust_proxy=True, solver=solver)
    seed = seed_with_home_move()
    app.hub.deals.draw = lambda game, winnable=False: seed  # type: ignore[method-assign]
    return app


@pytest.fixture
async def play(tmp_path: Path) -> AsyncIterator[tuple[Server, Clock]]:
    async for served in playing(tmp_path):
        yield served


@pytest.fixture
async def play_solving(tmp_path: Path) -> AsyncIterator[tuple[Server, Clock]]:
    """The same server with a solver (the daily deal is one it has won; no hints)."""
    async for served in playing(tmp_path, Solver(hint_seconds=0, par_seconds=5.0, nice=0)):
        yield served


async def playing(tmp_path: Path,
                  solver: Solver | None = None) -> AsyncIterator[tuple[Server, Clock]]:
    clock = Clock()
    app = app_for(tmp_path, clock, solver)
    await app.start()
    async with serving(app) as srv:
        yield srv, clock
    await app.stop()
    app.store.close()


_addresses = itertools.count(1)


async def visitor(srv: Server, address: str | None = None) -> tuple[RaceClient, str]:
    """A browser (a page load gives it its key, its socket sends it) at ``address`` (one of
    its own unless given)."""
    address = address or f"198.51.100.{next(_addresses) % 250 + 1}"
    _, headers, _ = await aget(srv, "/", {"X-Forwarded-For": address})
    key = key_of(headers["set-cookie"])
    client = await srv.client(additional_headers={"Cookie": f"sr_player={key}",
                                                  "X-Forwarded-For": address})
    return client, key


async def named(srv: Server, name: str, address: str | None = None) -> RaceClient:
    """A guest (a player without a password): his rated requests are casual."""
    client, _ = await visitor(srv, address)
    await client.request({"type": "set_name", "name": name})
    return client


async def account(srv: Server, name: str, address: str | None = None) -> RaceClient:
    """A player with a password: he plays rated races."""
    client = await named(srv, name, address)
    await client.request({"type": "set_password", "password": f"{name} password"})
    return client


async def three_moves(client: RaceClient, race: str) -> None:
    """Three moves (cards home first): enough not to abort the race."""
    for _ in range(3):
        legal = client.states[race]["legal"]
        await client.move(race, next((m for m in legal if ">f" in m), legal[0]))


async def sit(client: RaceClient, paired: dict[str, Any]) -> str:
    race = str(paired["race"])
    await client.join(race, token=paired["token"])
    return race


async def test_two_seekers_race_and_are_rated_once(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, bob = await account(srv, "Ann"), await account(srv, "Bob")
    seeking = await ann.request({"type": "seek", "game": "scotch", "time_limit": 300,
                                 "bot_after": 0})
    assert seeking["type"] == "seeking" and seeking["bot_at"] is None
    t0 = time.monotonic()
    paired_bob = await bob.request({"type": "seek", "game": "scotch", "time_limit": 300})
    paired_ann = await ann.next_event("paired", timeout=T)
    assert paired_bob["type"] == "paired" and paired_bob["race"] == paired_ann["race"]
    assert paired_bob["opponents"][0]["name"] == "Ann" and paired_bob["rated"] is True
    assert paired_ann["opponents"][0]["name"] == "Bob" and paired_ann["kind"] == "quick"
    race = await sit(ann, paired_ann)
    await sit(bob, paired_bob)
    await ann.next_event("countdown", timeout=T)
    assert time.monotonic() - t0 < T  # paired and counting down at once
    await ann.wait_state(race, T)
    await bob.wait_state(race, T)
    await three_moves(ann, race)
    await three_moves(bob, race)
    await bob.resign(race)  # a race of two: Ann has won
    over = await ann.next_event("race_over", timeout=T)
    assert over["standings"][0]["name"] == "Ann" and over["reason"] == "resigned"
    ratings = await ann.next_event("ratings", timeout=T)
    changes = {c["id"]: c for c in ratings["changes"]}
    assert ratings["rated"] is True and len(changes) == 2
    ann_id, bob_id = paired_bob["opponents"][0]["id"], paired_ann["opponents"][0]["id"]
    assert changes[ann_id]["delta"] > 0 > changes[bob_id]["delta"]
    assert changes[ann_id]["before"] == 1500 and changes[ann_id]["provisional"] is True
    # The same in the API, and on Ann's page.
    status, _, body = await aget(srv, f"/api/races/{race}")
    assert status == 200 and json.loads(body)["ratings"] == {k: v for k, v in ratings.items()
                                                              if k not in ("type", "race")}
    status, _, body = await aget(srv, "/api/players/ann")
    page = json.loads(body)
    assert page["ratings"]["scotch"]["races"] == 1
    assert page["ratings"]["scotch"]["rating"] == changes[ann_id]["after"]
    assert page["ratings"]["scotch"]["history"][0][1] == changes[ann_id]["after"]
    assert page["recent"][0]["race"] == race and page["recent"][0]["delta"] > 0
    assert page["stats"]["scotch"]["wins"] == 1 and page["stats"]["scotch"]["races"] == 1
    # Scored once: scoring again changes nothing.
    scorer = srv.app.scorer
    assert scorer is not None
    race_obj = srv.app.hub.get(race)
    assert race_obj is not None and await scorer.score(race_obj) is None
    assert (await srv.app.players.ratings(ann_id))["scotch"].races == 1  # type: ignore[union-attr]


async def test_a_seeker_is_never_paired_with_himself_and_may_cancel(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, key = await visitor(srv, "192.0.2.1")
    await ann.request({"type": "set_name", "name": "Ann"})
    await ann.request({"type": "set_password", "password": "Ann password"})
    tab = await srv.client(additional_headers={"Cookie": f"sr_player={key}",
                                               "X-Forwarded-For": "192.0.2.1"})
    await ann.request({"type": "seek", "game": "yukon", "time_limit": 180, "bot_after": 0})
    again = await tab.request({"type": "seek", "game": "yukon", "time_limit": 180,
                               "bot_after": 0})
    assert again["type"] == "seeking"  # the same player: not a race
    await ann.request({"type": "cancel_seek"})
    # Its seek leaves with it, once a reloading page could no longer take it over.
    srv.app.matchmaker.seek_grace = 0.05
    await tab.close()
    await asyncio.sleep(0.2)
    bob = await account(srv, "Bob")
    assert (await bob.request({"type": "seek", "game": "yukon", "time_limit": 180,
                               "bot_after": 0}))["type"] == "seeking"
    # Other queues: another time limit, or casual.
    cat = await account(srv, "Cat")
    assert (await cat.request({"type": "seek", "game": "yukon", "time_limit": 300,
                               "bot_after": 0}))["type"] == "seeking"
    dan = await named(srv, "Dan")
    assert (await dan.request({"type": "seek", "game": "yukon", "time_limit": 180,
                               "rated": False, "bot_after": 0}))["type"] == "seeking"
    anon = await srv.client()
    with pytest.raises(ServerError) as err:
        await anon.request({"type": "seek", "game": "yukon", "time_limit": 180})
    assert err.value.code == "forbidden"
    with pytest.raises(ServerError) as err:
        await bob.request({"type": "seek", "game": "yukon", "time_limit": 240})
    assert err.value.code == "bad_message"


async def test_nobody_comes_a_house_bot_sits_and_plays(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann = await account(srv, "Ann")
    seeking = await ann.request({"type": "seek", "game": "scotch", "time_limit": 180,
                                 "bot_after": 1})
    assert seeking["bot_at"] is not None
    paired = await ann.next_event("paired", timeout=T)
    bot = paired["opponents"][0]
    # No solver in this server: the nearest level that needs none (1500 -> Greedy, 1000).
    assert bot["bot"] is True and bot["level"] == 2 and "bot" in bot["name"]
    race = await sit(ann, paired)
    await ann.wait_state(race, T)
    moved = await ann.next_event("progress", timeout=T * 2)
    assert moved["player"] == "p2"  # the bot plays
    await three_moves(ann, race)
    await ann.resign(race)
    over = await ann.next_event("race_over", timeout=T)
    assert over["reason"] == "humans_done"
    assert [s["name"] for s in over["standings"]][1] == "Ann"  # a resign is a loss
    ratings = await ann.next_event("ratings", timeout=T)
    bots = [c for c in ratings["changes"] if c.get("bot")]
    assert bots and bots[0]["before"] == bots[0]["after"] == 1000  # an anchor: never moves
    mine = next(c for c in ratings["changes"] if not c.get("bot"))
    assert mine["delta"] < 0


async def test_play_a_bot_at_once(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann = await named(srv, "Ann")
    with pytest.raises(ServerError) as err:  # the solver's levels need a solver
        await ann.request({"type": "play_bot", "game": "yukon", "level": 4})
    assert err.value.code == "unavailable"
    paired = await ann.request({"type": "play_bot", "game": "yukon", "level": 1,
                                "time_limit": 120, "rated": False})
    assert paired["kind"] == "bot" and paired["rated"] is False
    assert paired["opponents"][0]["level"] == 1
    race = await sit(ann, paired)
    snap = await ann.next_event("snapshot", timeout=T)
    assert snap["options"]["kind"] == "bot" and snap["players"][1]["bot"] is True
    me = snap["players"][0]
    assert me["rating"] == 1500 and me["provisional"] is True  # new here: 1500?
    await ann.wait_state(race, T)
    await ann.resign(race)
    over = await ann.next_event("race_over", timeout=T)
    assert over["standings"][1]["resigned"] is True and over["standings"][1]["aborted"] is True
    ratings = await ann.next_event("ratings", timeout=T)
    assert ratings["rated"] is False and ratings["changes"] == []
    with pytest.raises(ServerError) as err:  # a new bot race, not a rematch
        await ann.request({"type": "rematch", "race": race})
    assert err.value.code == "forbidden"
    # Resigned at once: aborted, out of her statistics (her history keeps it, marked).
    _, _, body = await aget(srv, "/api/players/Ann")
    page = json.loads(body)
    assert "yukon" not in page["stats"] and page["recent"][0]["race"] == race


async def test_a_race_left_unscored_by_a_dead_process_is_scored_by_the_next(
        tmp_path: Path) -> None:
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "index.html").write_text("<!doctype html>")
    seed = seed_with_home_move()

    async def run(store: SQLiteStore) -> App:
        app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=client_dir,
                  trust_proxy=True)
        app.hub.deals.draw = lambda game, winnable=False: seed  # type: ignore[method-assign]
        await app.start()
        return app

    store = SQLiteStore(tmp_path / "race.db")
    app = await run(store)
    async with serving(app) as srv:
        app.hub.scorer = None  # it dies before it scores
        ann, bob = await account(srv, "Ann"), await account(srv, "Bob")
        await ann.request({"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0})
        paired = await bob.request({"type": "seek", "game": "scotch", "time_limit": 300})
        race = await sit(bob, paired)
        await sit(ann, await ann.next_event("paired", timeout=T))
        await bob.wait_state(race, T)
        await ann.wait_state(race, T)
        await three_moves(ann, race)
        await three_moves(bob, race)
        await bob.resign(race)
        await ann.next_event("race_over", timeout=T)
    await app.stop()
    store.close()
    assert SQLiteStore(tmp_path / "race.db").players().path  # the file is there

    store = SQLiteStore(tmp_path / "race.db")
    players = store.players()
    assert await players.to_score(10) == [race]
    app = await run(store)  # its sweep runs at start
    for _ in range(100):
        if await players.scored(race) is not None:
            break
        await asyncio.sleep(0.05)
    body = await players.scored(race)
    assert body is not None and body["rated"] is True and len(body["changes"]) == 2
    assert await players.to_score(10) == []
    assert app.scorer is not None and await app.scorer.sweep() == 0  # once
    ann_page = await players.by_name("Ann")
    assert ann_page is not None
    assert (await players.ratings(ann_page.id))["scotch"].races == 1
    await app.stop()
    store.close()


async def test_the_daily_deal_stays_secret_until_the_day_is_over(
        play_solving: tuple[Server, Clock]) -> None:
    srv, clock = play_solving
    ann, ann_key = await visitor(srv)
    await ann.request({"type": "set_name", "name": "Ann"})
    await ann.request({"type": "set_password", "password": "correct horse 42"})  # an account
    paired = await ann.request({"type": "daily", "game": "scotch"}, timeout=T * 12)
    day = calendar.day_of(clock())
    assert paired["kind"] == "daily" and paired["day"] == day and paired["opponents"] == []
    race = await sit(ann, paired)
    snap = await ann.next_event("snapshot", timeout=T)
    await ann.wait_state(race, T)
    # The same race again (to resume), never a second attempt.
    assert (await ann.request({"type": "daily", "game": "scotch"}))["race"] == race
    status, _, body = await aget(srv, "/api/daily/scotch", {"Cookie": f"sr_player={ann_key}"})
    page = json.loads(body)
    assert page["commitment"] == snap["commitment"] and page["day"] == day
    # Nobody else sees anything of it: no watching, no API, no replay.
    bob = await named(srv, "Bob")
    with pytest.raises(ServerError) as err:
        await bob.watch(race)
    assert err.value.code == "forbidden"
    assert (await aget(srv, f"/api/races/{race}"))[0] == 403
    for _ in range(3):  # three moves: committed to it (a secret deal: cards home first)
        legal = ann.states[race]["legal"]
        await ann.move(race, next((m for m in legal if ">f" in m), legal[0]))
    home = ann.states[race]["progress"]["foundation"]
    await ann.resign(race)
    over = await ann.next_event("race_over", timeout=T)
    assert "seed" not in over and "salt" not in over
    assert (await aget(srv, f"/api/races/{race}"))[0] == 403
    assert (await aget(srv, f"/api/races/{race}/replay/p1"))[0] == 403
    with pytest.raises(ServerError):
        await bob.watch(race)
    await ann.next_event("ratings", timeout=T)  # scored (unrated): in the day's table
    status, _, body = await aget(srv, "/api/daily/scotch", {"Cookie": f"sr_player={ann_key}"})
    page = json.loads(body)
    assert page["you"]["played"] is True and page["you"]["streak"] == 1
    assert [(r["place"], r["name"], r["foundation"]) for r in page["table"]] == [
        (1, "Ann", home)]
    ann_id = (await ann.request({"type": "me"}))["player"]["id"]
    assert page["table"][0]["id"] == ann_id and page["you"]["result"]["place"] == 1
    with pytest.raises(ServerError) as err:  # played once a day: no rematch
        await ann.request({"type": "rematch", "race": race})
    assert err.value.code == "forbidden"
    assert "race" not in page["table"][0]  # no replay of today's deal
    assert page["yesterday"] is None
    # A guest plays it too, unranked: the page says where he would stand.
    cid, cid_key = await visitor(srv)
    await cid.request({"type": "set_name", "name": "Cid"})
    theirs = await sit(cid, await cid.request({"type": "daily", "game": "scotch"},
                                              timeout=T * 12))
    await cid.wait_state(theirs, T)
    for _ in range(3):
        legal = cid.states[theirs]["legal"]
        await cid.move(theirs, next((m for m in legal if ">f" in m), legal[0]))
    await cid.resign(theirs)
    await cid.next_event("ratings", timeout=T)
    status, _, body = await aget(srv, "/api/daily/scotch", {"Cookie": f"sr_player={cid_key}"})
    page = json.loads(body)
    assert [r["name"] for r in page["table"]] == ["Ann"]  # accounts only
    assert page["you"]["ranked"] is False and page["you"]["account"] is False
    assert page["you"]["played"] is True and page["you"]["would_place"] == 1
    # The next day (and the time limit after it): yesterday's deal is out, replays too.
    clock.offset = calendar.day_start(day) + calendar.DAY_MS + 20 * 60_000 - int(
        time.time() * 1000)
    status, _, body = await aget(srv, "/api/daily/scotch", {"Cookie": f"sr_player={ann_key}"})
    page = json.loads(body)
    assert page["yesterday"]["day"] == day and page["yesterday"]["seed"]
    assert page["yesterday"]["table"][0]["race"] == race
    assert page["you"]["streak"] == 1 and page["you"]["played"] is False
    status, _, body = await aget(srv, f"/api/races/{race}")
    assert status == 200 and json.loads(body)["seed"] == page["yesterday"]["seed"]
    assert (await aget(srv, f"/api/races/{race}/replay/p1"))[0] == 200
