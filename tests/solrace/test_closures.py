"""Closed accounts leave the tournament and arena tables (solrace.service.closures), over real
WebSockets on one process: closed by a moderator, an arena's winner loses his place at once
(``arena_standings`` to the watchers, the table over HTTP), and still after a restart; an account
closed while the server was down leaves the table once the arena is taken back; a tournament's
entrant who is an account loses his place too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from solrace.net.app import App
from solrace.store.sqlite_store import SQLiteStore

from tests.solrace.conftest import T, serving
from tests.solrace.test_accounts import aget
from tests.solrace.test_arenas import event, sit
from tests.solrace.test_fairplay_server import player, three_moves


async def run(tmp_path: Path) -> tuple[App, SQLiteStore]:
    client_dir = tmp_path / "client"
    client_dir.mkdir(exist_ok=True)
    (client_dir / "index.html").write_text("<!doctype html>")
    store = SQLiteStore(tmp_path / "race.db")
    app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=client_dir,
              trust_proxy=True)
    await app.start()
    return app, store


def places(table: list[dict[str, Any]]) -> dict[str, tuple[int | None, bool]]:
    return {r["player"]: (r["place"], r.get("closed", False)) for r in table}


async def table_of(srv: Any, aid: str) -> list[dict[str, Any]]:
    _, _, body = await aget(srv, f"/api/arenas/{aid}")
    return list(json.loads(body)["standings"])


async def test_a_closed_account_leaves_an_arena_table_now_and_after_a_restart(
        tmp_path: Path) -> None:
    app, store = await run(tmp_path)
    async with serving(app) as srv:
        ann, _, ann_id = await player(srv, "Ann", "10.3.0.1")
        bob, _, bob_id = await player(srv, "Bob", "10.3.0.2")
        cid, _, cid_id = await player(srv, "Cid", "10.3.0.3")
        mod, _, mod_id = await player(srv, "Moda", "10.3.0.4")
        assert app.moderation is not None
        await app.moderation.store.set_role(mod_id, "moderator")
        aid = (await ann.request({"type": "arena_create", "game": "scotch", "minutes": 5,
                                  "starts_in": 1}))["arena"]
        watcher = await srv.client()
        await watcher.request({"type": "arena_watch", "arena": aid})
        for client in (ann, bob):
            await client.request({"type": "arena_join", "arena": aid})
        race = await sit({c: await event(c, "paired", aid) for c in (ann, bob)})
        await three_moves(ann, race)
        await three_moves(bob, race)
        await bob.resign(race)  # Ann wins: first, with 2 points
        await event(ann, "arena_you", aid)
        await cid.request({"type": "arena_join", "arena": aid})
        assert places(await table_of(srv, aid))[ann_id] == (1, False)
        closed = await mod.request({"type": "mod_close", "player": ann_id})
        assert closed["closed"] is True
        while True:  # the watchers hear it at once
            table = (await event(watcher, "arena_standings", aid))["standings"]
            if places(table)[ann_id][1]:
                break
        assert places(table)[ann_id] == (None, True)
        assert table[-1]["player"] == ann_id and table[-1]["points"] == 2
        assert places(await table_of(srv, aid)) == places(table)
        assert places(table)[bob_id][0] == 1 or places(table)[cid_id][0] == 1
        before = await table_of(srv, aid)
    await app.stop()
    store.close()
    # Bob's account is closed while the server is down: nobody runs the arena to tell.
    offline = SQLiteStore(tmp_path / "race.db")
    await offline.moderation().close(bob_id, None, "fair_play", 1)
    offline.close()
    app, store = await run(tmp_path)  # a restart: the arena is taken back from the file
    async with serving(app) as srv:
        after = await table_of(srv, aid)
        assert places(after)[ann_id] == (None, True)  # its log keeps the closure
        for _ in range(int(T * 40)):  # the sweep of a process that holds it finds Bob's
            after = await table_of(srv, aid)
            if places(after)[bob_id][1]:
                break
            await asyncio.sleep(0.05)
        assert places(after) == {ann_id: (None, True), bob_id: (None, True), cid_id: (1, False)}
        assert len(before) == len(after)
    await app.stop()
    store.close()


async def test_a_closed_account_leaves_a_tournament_table(tmp_path: Path) -> None:
    app, store = await run(tmp_path)
    async with serving(app) as srv:
        ann, _, ann_id = await player(srv, "Ann", "10.3.0.1")
        bob, _, _ = await player(srv, "Bob", "10.3.0.2")
        mod, _, mod_id = await player(srv, "Moda", "10.3.0.4")
        assert app.moderation is not None
        await app.moderation.store.set_role(mod_id, "moderator")
        host = await srv.client()
        created = await host.request({"type": "tournament_create", "name": "Cup",
                                      "format": "rounds", "games": ["scotch"], "rounds": 1,
                                      "gap": 0})
        tid = created["tournament"]
        for client, name in ((ann, "Ann"), (bob, "Bob")):
            await client.request({"type": "tournament_join", "tournament": tid, "name": name})
        await host.request({"type": "tournament_start", "tournament": tid,
                            "token": created["host_token"]})
        seats = {}
        for client in (ann, bob):
            seats[client] = await client.next_event("round", timeout=T * 2)
        race = str(seats[ann]["race"])
        for client in (ann, bob):
            await client.join(race, token=seats[client]["token"])
        for client in (ann, bob):
            await client.wait_state(race, T * 2)
        await three_moves(ann, race)
        await three_moves(bob, race)
        await bob.resign(race)  # Ann first
        while True:
            msg = await bob.next_event("tournament_over", timeout=T * 4)
            if msg.get("tournament") == tid:
                break
        first = msg["standings"][0]
        assert first["place"] == 1 and first["points"] == 1 and first["name"] == "Ann"
        await mod.request({"type": "mod_close", "player": ann_id})
        while True:
            msg = await bob.next_event("standings", timeout=T * 4)
            if msg.get("tournament") == tid:
                break
        rows = {r["entrant"]: r for r in msg["standings"]}
        assert rows[first["entrant"]]["place"] is None and rows[first["entrant"]]["closed"]
        assert [(r["name"], r["place"], r["points"]) for r in msg["standings"]] == [
            ("Bob", 1, 1), ("Ann", None, 0)]
    await app.stop()
    store.close()
