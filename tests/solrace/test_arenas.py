"""Arenas over real WebSockets on one process: an account creates one, players join before the
start, are paired head to head when it starts (``paired``, kind ``arena``), race, score (a win 2;
a resign loses), are paired again; a racer who leaves is paused; the table over HTTP and to the
followers; the end; bad input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from solrace.core.arena import Arena
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server, T
from tests.solrace.test_accounts import aget
from tests.solrace.test_fairplay_server import player, server_with, three_moves


@pytest.fixture
async def arenas(tmp_path: Path) -> AsyncIterator[Server]:
    from solrace.solver.jobs import Solver

    async for srv in server_with(tmp_path, Solver(hint_seconds=0, par_seconds=2.0, nice=0)):
        yield srv


async def event(client: RaceClient, kind: str, arena: str, **match: Any) -> dict[str, Any]:
    """The next message of ``kind`` about ``arena`` (and matching ``match``)."""
    while True:
        msg = await client.next_event(kind, timeout=T * 2)
        if msg.get("arena") == arena and all(msg.get(k) == v for k, v in match.items()):
            return msg


async def sit(seats: dict[RaceClient, dict[str, Any]]) -> str:
    """Each takes his seat; the race starts once both sat."""
    for client, paired in seats.items():
        await client.join(str(paired["race"]), token=paired["token"])
    race = str(next(iter(seats.values()))["race"])
    for client in seats:
        await client.wait_state(race, T * 2)
    return race


async def test_an_arena_pairs_scores_and_pairs_again(arenas: Server) -> None:
    ann, _, ann_id = await player(arenas, "Ann", "10.2.0.1")
    bob, _, bob_id = await player(arenas, "Bob", "10.2.0.2")
    created = await ann.request({"type": "arena_create", "game": "scotch", "minutes": 5,
                                 "starts_in": 1, "time_limit": 120, "name": "Ann's cup"})
    aid = created["arena"]
    watcher = await arenas.client()
    view = await watcher.request({"type": "arena_watch", "arena": aid})
    assert view["type"] == "arena" and view["status"] == "upcoming" and view["rated"] is True
    assert view["name"] == "Ann's cup" and view["ends_at"] - view["starts_at"] == 300_000
    for client in (ann, bob):
        joined = await client.request({"type": "arena_join", "arena": aid})
        assert joined["type"] == "arena_joined"
        me = await event(client, "arena", aid)
        assert me["you"] is not None and me["you"]["points"] == 0
    # It starts: both are paired with each other, as a quick race would.
    paired = {c: await event(c, "paired", aid) for c in (ann, bob)}
    race = paired[ann]["race"]
    assert paired[ann]["kind"] == "arena" and paired[bob]["race"] == race
    assert race.startswith(aid + "-") and paired[ann]["opponents"][0]["id"] == bob_id
    await sit(paired)
    await three_moves(ann, race)
    await three_moves(bob, race)
    await bob.resign(race)  # Bob loses: Ann wins 2 points
    table = await event(watcher, "arena_standings", aid)
    rows = {r["player"]: r for r in table["standings"]}
    assert rows[ann_id]["points"] == 2 and rows[ann_id]["wins"] == 1 and rows[ann_id]["place"] == 1
    assert rows[bob_id]["points"] == 0 and rows[bob_id]["races"] == 1
    you = await event(ann, "arena_you", aid)
    assert you["you"]["points"] == 2
    # A rated arena's race between two accounts is rated by the rules of rated play; both wait
    # again, and are paired again (nobody else waits) — the pairing may come before the scoring.
    got: dict[str, dict[str, Any]] = {}
    while len(got) < 2:
        msg = await ann.next_event("ratings", "paired", timeout=T * 4)
        if (msg["type"] == "ratings" and msg["race"] == race) or \
                (msg["type"] == "paired" and msg.get("arena") == aid):
            got[msg["type"]] = msg
    assert got["ratings"]["rated"] is True
    deltas = {c["id"]: c["delta"] for c in got["ratings"]["changes"]}
    assert deltas[bob_id] < 0 < deltas[ann_id]
    again = {ann: got["paired"], bob: await event(bob, "paired", aid)}
    assert again[ann]["race"] == again[bob]["race"] != race
    with pytest.raises(ServerError) as err:  # no rematch outside the arena: it pairs again
        await ann.request({"type": "rematch", "race": race})
    assert err.value.code == "forbidden"
    # The table over HTTP, and the list.
    status, _, body = await aget(arenas, f"/api/arenas/{aid}")
    assert status == 200 and json.loads(body)["standings"][0]["player"] == ann_id
    status, _, body = await aget(arenas, "/api/arenas")
    listed = {a["arena"]: a for a in json.loads(body)}
    assert listed[aid]["status"] == "running" and listed[aid]["players"] == 2


async def test_an_entrant_who_leaves_is_paused_and_comes_back(
        arenas: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from solrace.service import arenas as director

    monkeypatch.setattr(director, "AWAY_MS", 300)  # a short absence pauses him (not 10 s)
    ann, _, ann_id = await player(arenas, "Ann", "10.2.0.1")
    bob, bob_key, bob_id = await player(arenas, "Bob", "10.2.0.2")
    aid = (await ann.request({"type": "arena_create", "game": "yukon", "minutes": 5,
                              "starts_in": 30}))["arena"]
    for client in (ann, bob):
        await client.request({"type": "arena_join", "arena": aid})
    await bob.close()  # his only connection: paused
    for _ in range(100):
        _, _, body = await aget(arenas, f"/api/arenas/{aid}")
        rows = {r["player"]: r for r in json.loads(body)["standings"]}
        if rows[bob_id]["paused"]:
            break
        await asyncio.sleep(0.05)
    assert rows[bob_id]["paused"] is True and rows[ann_id]["paused"] is False
    # He comes back: joining again resumes him.
    bob2 = await arenas.client(additional_headers={"Cookie": f"sr_player={bob_key}",
                                                   "X-Forwarded-For": "10.2.0.2"})
    await bob2.request({"type": "arena_join", "arena": aid})
    _, _, body = await aget(arenas, f"/api/arenas/{aid}")
    rows = {r["player"]: r for r in json.loads(body)["standings"]}
    assert rows[bob_id]["paused"] is False
    await bob2.request({"type": "arena_pause", "arena": aid})
    _status, _, body = await aget(arenas, f"/api/arenas/{aid}")
    assert {r["player"]: r for r in json.loads(body)["standings"]}[bob_id]["paused"] is True


async def racing(srv: Server) -> tuple[RaceClient, RaceClient, str, str]:
    """Ann and Bob in an arena that has started, in their first race, three moves each: the
    two clients, the arena and the race."""
    ann, _, _ = await player(srv, "Ann", "10.2.0.1")
    bob, _, _ = await player(srv, "Bob", "10.2.0.2")
    aid = (await ann.request({"type": "arena_create", "game": "scotch", "minutes": 5,
                              "starts_in": 1}))["arena"]
    for client in (ann, bob):
        await client.request({"type": "arena_join", "arena": aid})
    race = await sit({c: await event(c, "paired", aid) for c in (ann, bob)})
    await three_moves(ann, race)
    await three_moves(bob, race)
    return ann, bob, aid, race


def scores(a: Arena) -> dict[str, tuple[int, int]]:
    """Each entrant's points and races, by name."""
    return {e.name: (e.points, e.races) for e in a.entrants.values()}


async def test_an_arena_loaded_twice_at_once_is_held_once(arenas: Server) -> None:
    """Two loads of an arena at once (on Redis: the takeover of a dead owner's arena, and a
    command or a page that came for it meanwhile) hold one arena, and a race that ended while
    nobody ran it counts once — also for the next process that rebuilds it from its log."""
    hub = arenas.app.hub
    ann, bob, aid, race = await racing(arenas)
    hub.arena_director.forget(aid)  # the process lets the arena go (its lease lapsed)...
    await bob.resign(race)  # ...and the race ends meanwhile: its result is not taken
    hub.forget(race)
    first, second = await asyncio.gather(hub.load_tournament(aid), hub.load_tournament(aid))
    assert first is second is hub.arenas[aid]
    # Held at once; its race is loaded after it, and gives its result then.
    assert (await event(ann, "arena_you", aid))["you"]["points"] == 2
    await hub.store.flushed()
    rebuilt = await hub.store.load_tournament(aid)
    assert isinstance(rebuilt, Arena) and rebuilt.v == hub.arenas[aid].v
    for arena in (hub.arenas[aid], rebuilt):
        assert scores(arena) == {"Ann": (2, 1), "Bob": (0, 1)}


async def test_a_result_whose_write_failed_is_taken_again(tmp_path: Path) -> None:
    """The arena's ``result`` goes in the commit after its race's end: when that one fails,
    the arena (which took the result in memory) is rebuilt from the store and takes the
    result again from the race — not lost, not counted twice, and the log has no hole."""
    from solrace.solver.jobs import Solver

    from tests.solrace.failing import FailingStore

    store = FailingStore(tmp_path / "race.db")
    store.fail_if = lambda batch: any(row[3] == "result" for row in batch.tlog)
    async for srv in server_with(tmp_path, Solver(hint_seconds=0, par_seconds=2.0, nice=0),
                                 store):
        hub = srv.app.hub
        ann, bob, aid, race = await racing(srv)
        await bob.resign(race)
        # Taken again once the store writes again; both are paired again after it.
        you = await event(ann, "arena_you", aid)
        assert you["you"]["points"] == 2 and you["you"]["races"] == 1, you
        assert store.fail_if is None  # the write did fail once
        again = await event(ann, "paired", aid)
        assert again["race"] != race
        await store.flushed()
        rebuilt = await store.load_tournament(aid)
        held = hub.arenas[aid]
        assert isinstance(rebuilt, Arena) and rebuilt.v == held.v
        for arena in (held, rebuilt):
            assert scores(arena) == {"Ann": (2, 1), "Bob": (0, 1)}
            assert list(arena.running) == [again["race"]]


async def test_an_arena_taken_up_again_tells_the_seats_not_taken_yet(arenas: Server) -> None:
    """The ``paired`` of an owner that died right after its commit may never have left it: the
    process that takes the arena up tells every seat of a race not sat down in again (a client
    takes a seat once: the same race told twice changes nothing)."""
    hub = arenas.app.hub
    ann, _, _ = await player(arenas, "Ann", "10.2.0.1")
    bob, _, _ = await player(arenas, "Bob", "10.2.0.2")
    aid = (await ann.request({"type": "arena_create", "game": "scotch", "minutes": 5,
                              "starts_in": 1}))["arena"]
    for client in (ann, bob):
        await client.request({"type": "arena_join", "arena": aid})
    seats = {c: await event(c, "paired", aid) for c in (ann, bob)}
    race = str(seats[ann]["race"])
    hub.arena_director.forget(aid)  # its process let it go before anyone sat down
    hub.forget(race)
    await hub.load_tournament(aid)  # taken up again
    for client, seat in seats.items():
        again = await event(client, "paired", aid)
        assert again["race"] == race and again["token"] == seat["token"]
    assert await sit(seats) == race


async def test_bad_arena_input_is_refused(arenas: Server) -> None:
    ann, _, _ = await player(arenas, "Ann", "10.2.0.1")
    guest, _, _ = await player(arenas, "Gus", "10.2.0.3", account=False)
    for bad, code in (({"minutes": 0}, "bad_message"), ({"minutes": 181}, "bad_message"),
                      ({"minutes": 10, "game": "chess"}, "bad_message"),
                      ({"minutes": 10, "starts_in": 604801}, "bad_message"),
                      ({"minutes": 10, "time_limit": 5}, "bad_message")):
        with pytest.raises(ServerError) as err:
            await ann.request({"type": "arena_create", "game": "scotch", **bad})
        assert err.value.code == code, bad
    with pytest.raises(ServerError) as err:  # only an account creates one
        await guest.request({"type": "arena_create", "game": "scotch", "minutes": 10})
    assert err.value.code == "forbidden"
    for _ in range(2):
        await ann.request({"type": "arena_create", "game": "scotch", "minutes": 10,
                           "starts_in": 600})
    with pytest.raises(ServerError) as err:  # two to come per player at most
        await ann.request({"type": "arena_create", "game": "scotch", "minutes": 10})
    assert err.value.code == "limit_reached"
    for kind in ("arena_join", "arena_watch"):
        with pytest.raises(ServerError) as err:
            await ann.request({"type": kind, "arena": "nosucharena"})
        assert err.value.code == "not_found"
    anonymous = await arenas.client()  # no cookie: no player to enter with
    with pytest.raises(ServerError) as err:
        await anonymous.request({"type": "arena_join", "arena": "abc"})
    assert err.value.code in ("forbidden", "not_found")
    status, _, _ = await aget(arenas, "/api/arenas/nosucharena")
    assert status == 404


async def test_the_table_survives_a_restart_and_the_arena_ends(tmp_path: Path) -> None:
    from solrace.net.app import App
    from solrace.store.sqlite_store import SQLiteStore

    from tests.solrace.conftest import serving
    from tests.solrace.test_play import Clock

    clock = Clock()
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "index.html").write_text("<!doctype html>")

    async def run() -> tuple[App, SQLiteStore]:
        store = SQLiteStore(tmp_path / "race.db")
        app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=client_dir,
                  trust_proxy=True, clock=clock)
        await app.start()
        return app, store

    app, store = await run()
    async with serving(app) as srv:
        ann, _, ann_id = await player(srv, "Ann", "10.2.0.1")
        bob, _, _ = await player(srv, "Bob", "10.2.0.2")
        aid = (await ann.request({"type": "arena_create", "game": "scotch", "minutes": 1}))[
            "arena"]
        for client in (ann, bob):
            await client.request({"type": "arena_join", "arena": aid})
        seats = {c: await event(c, "paired", aid) for c in (ann, bob)}
        race = await sit(seats)
        await three_moves(ann, race)
        await three_moves(bob, race)
        await bob.resign(race)
        await event(ann, "arena_you", aid)
        second = await event(ann, "paired", aid)  # paired again at once (within 100 ms)
        _, _, body = await aget(srv, f"/api/arenas/{aid}")
        before = json.loads(body)["standings"]
        assert all(row["racing"] for row in before)
    await app.stop()
    store.close()
    app, store = await run()  # a restart: the arena is taken back from the file
    async with serving(app) as srv:
        _, _, body = await aget(srv, f"/api/arenas/{aid}")
        again = json.loads(body)
        assert again["standings"] == before and again["status"] == "running"
        assert again["standings"][0]["player"] == ann_id and again["standings"][0]["points"] == 2
        watcher = await srv.client()
        await watcher.request({"type": "arena_watch", "arena": aid})
        clock.offset += 61_000  # its minute is over (the timers are poked, not waited for)
        arena = app.hub.arenas[aid]
        app.hub.arena_director._on_deadline(aid)  # the second race is still on: no end yet
        assert arena.finished_at is None
        app.hub._on_deadline(str(second["race"]))  # nobody sat down: it ends, and the arena
        over = await event(watcher, "arena_over", aid)
        assert over["standings"][0]["points"] == 2 and arena.finished_at is not None
        _, _, body = await aget(srv, f"/api/arenas/{aid}")
        assert json.loads(body)["status"] == "finished"
        with pytest.raises(ServerError) as err:
            await watcher.request({"type": "arena_join", "arena": aid})
        assert err.value.code in ("tournament_over", "forbidden")
    await app.stop()
    store.close()
