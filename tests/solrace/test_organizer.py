"""Tournaments on a real server: entrants seated by ``round`` messages, the races of a round on
one deal revealed together, standings after every race, host tools, the API and the CSV, a
restart mid-tournament."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import urllib.request
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient, ServerError

from .conftest import Server, T
from .test_durability import start_server, stop

HOSTILE = ["=cmd|' /C calc'!A0", "+1+2", "-3", "@SUM(1)", 'comma, "quote"', "plain"]


def http(url: str) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=T) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class Entrant:
    """One entrant's connection: joins the tournament, takes each seat it is given."""

    def __init__(self, client: RaceClient, tid: str) -> None:
        self.client = client
        self.tid = tid
        self.entrant = ""
        self.token = ""

    async def join(self, name: str, **extra: Any) -> dict[str, Any]:
        reply = await self.client.request({"type": "tournament_join", "tournament": self.tid,
                                           "name": name, **extra})
        self.entrant, self.token = reply["entrant"], reply["token"]
        return reply

    async def seat(self) -> dict[str, Any]:
        return await self.client.next_event("round", timeout=T)

    async def take(self, seat: dict[str, Any]) -> None:
        await self.client.join(seat["race"], token=seat["token"])


async def host_request(host: RaceClient, kind: str, tid: str, token: str,
                       **extra: Any) -> dict[str, Any]:
    return await host.request({"type": f"tournament_{kind}", "tournament": tid,
                               "token": token, **extra})


async def test_a_rounds_tournament_end_to_end(server: Server) -> None:
    host = await server.client()
    created = await host.request({"type": "tournament_create", "name": "Spring Cup",
                                  "format": "rounds", "games": ["scotch", "yukon"],
                                  "rounds": 2, "race_size": 3, "gap": 0, "grace": 5,
                                  "time_limit": 120})
    tid, htoken = created["tournament"], created["host_token"]
    watcher = await server.client()
    view = await watcher.request({"type": "tournament_watch", "tournament": tid})
    assert view["type"] == "tournament" and view["status"] == "entry"
    entrants = []
    for i in range(7):
        e = Entrant(await server.client(), tid)
        await e.join(HOSTILE[i % len(HOSTILE)] + ("" if i < 6 else " 2"), bot=i == 6)
        entrants.append(e)
    assert [x.entrant for x in entrants] == [f"e{i}" for i in range(1, 8)]
    await host_request(host, "start", tid, htoken)
    seeds_by_round: list[set[str]] = []
    for number in (1, 2):
        seats = [await e.seat() for e in entrants]
        races = sorted({s["race"] for s in seats})
        assert len(races) == 3 and all(s["round"] == number for s in seats)
        assert sorted(sum(1 for s in seats if s["race"] == r) for r in races) == [2, 2, 3]
        # Everyone takes his seat: each race starts once all its entrants are there.
        for e, s in zip(entrants, seats, strict=True):
            await e.take(s)
        for e, s in zip(entrants, seats, strict=True):
            await e.client.wait_state(s["race"], T)
            snap = await e.client.watch(s["race"])
            assert snap["tournament"]["name"] == "Spring Cup"
            assert snap["tournament"]["round"] == number and snap["tournament"]["rounds"] == 2
            assert snap["seated_until"] is not None
        # Races end one after the other: the first ones reveal nothing until the last.
        overs = []
        for r in races:
            members = [e for e, s in zip(entrants, seats, strict=True) if s["race"] == r]
            for e in members:  # everyone moves, then everyone resigns (a no-op once over)
                await e.client.move(r, e.client.states[r]["legal"][0])
            for e in members:
                await e.client.resign(r)
            owner = next(e for e, s in zip(entrants, seats, strict=True) if s["race"] == r)
            overs.append(await owner.client.next_event("race_over", timeout=T))
            standings = await watcher.next_event("standings", timeout=T)
            assert standings["round"] == number
            # Which race ended, and its order: first the racer who moved, then by entry.
            movers = [e.entrant for e, s in zip(entrants, seats, strict=True) if s["race"] == r]
            assert standings["race"] == r and sorted(standings["results"]) == sorted(movers)
        # The last standings of the round say it is over (and, with gap 0, that nothing
        # starts by itself).
        assert standings["round_over"] is True and standings["next_at"] is None
        assert [("seed" in o) for o in overs] == [False, False, True]
        first = next(e for e, s in zip(entrants, seats, strict=True) if s["race"] == races[0])
        reveal = await first.client.next_event("reveal", timeout=T)
        assert reveal["race"] == races[0] and reveal["seed"] == overs[-1]["seed"]
        seeds = set()
        for r in races:
            status, body = await asyncio.to_thread(http, f"{server.http}/api/races/{r}")
            seeds.add(json.loads(body)["seed"])
        assert len(seeds) == 1, "every race of a round deals the same seed"
        seeds_by_round.append(seeds)
        if number == 1:
            view = await watcher.request({"type": "tournament_watch", "tournament": tid})
            assert view["rounds"][0]["status"] == "over"
            assert view["rounds"][0]["seats"] == {
                r: [e.entrant for e, s in zip(entrants, seats, strict=True) if s["race"] == r]
                for r in races}
            await host_request(host, "next", tid, htoken)
    assert seeds_by_round[0] != seeds_by_round[1]
    over = await watcher.next_event("tournament_over", timeout=T)
    # Places: 1, then each row's place is its position, unless it equals the row above on
    # points, cards and time, when it shares that place (1, 2, 2, 4...).
    rows = over["standings"]
    assert rows[0]["place"] == 1
    for i in range(1, len(rows)):
        same = all(rows[i][k] == rows[i - 1][k] for k in ("points", "cards", "time_ms"))
        assert rows[i]["place"] == (rows[i - 1]["place"] if same else i + 1), rows
    with __import__("pytest").raises(ServerError) as info:
        await host_request(host, "next", tid, htoken)
    assert info.value.code == "nothing_waiting"
    status, body = await asyncio.to_thread(http, f"{server.http}/api/tournaments/{tid}")
    api = json.loads(body)
    assert status == 200 and api["status"] == "finished" and len(api["rounds"]) == 2
    assert api["entrants"][6]["bot"] is True
    status, body = await asyncio.to_thread(
        http, f"{server.http}/api/tournaments/{tid}/standings.csv")
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert status == 200 and rows[0][:3] == ["place", "name", "points"] and len(rows) == 8
    names = {row[1] for row in rows[1:]}
    assert "'=cmd|' /C calc'!A0" in names and "'+1+2" in names and "'-3" in names
    assert "'@SUM(1)" in names and 'comma, "quote"' in names
    assert all(not n.startswith(("=", "+", "-", "@")) for n in names)
    assert (await asyncio.to_thread(http, f"{server.http}/api/tournaments/nope"))[0] == 404


async def test_entry_rules_and_host_tools(server: Server) -> None:
    host = await server.client()
    created = await host.request({"type": "tournament_create", "name": "Locked",
                                  "format": "knockout", "games": ["scotch"], "best_of": 3,
                                  "code": "sesame", "max_entrants": 3})
    tid, htoken = created["tournament"], created["host_token"]
    a = Entrant(await server.client(), tid)
    try:
        await a.join("ann")
        raise AssertionError("joined without the code")
    except ServerError as exc:
        assert exc.code == "forbidden"
    await a.join("ann", code="sesame")
    b = Entrant(await server.client(), tid)
    await b.join("bob", code="sesame")
    c = Entrant(await server.client(), tid)
    await c.join("cid", code="sesame")
    try:
        await Entrant(await server.client(), tid).join("dan", code="sesame")
        raise AssertionError("joined a full tournament")
    except ServerError as exc:
        assert exc.code == "tournament_full"
    again = await server.client()
    resumed = await again.request({"type": "tournament_join", "tournament": tid,
                                   "token": a.token})
    assert resumed["entrant"] == "e1"
    for bad in ({"token": "nope", "entrant": "e2"}, {"token": htoken, "entrant": "e9"}):
        try:
            await host_request(host, "remove", tid, **{"token": htoken, **bad})
            raise AssertionError("accepted")
        except ServerError as exc:
            assert exc.code in ("forbidden", "not_found")
    await host_request(host, "remove", tid, htoken, entrant="e3")
    await host_request(host, "entry", tid, htoken, open=False)
    await host_request(host, "start", tid, htoken)
    # e1 came back on another connection, which now speaks for him: his seat goes there.
    replaced = await a.client.next_event("replaced", timeout=T)
    assert replaced["player"] == replaced["entrant"] == "e1"
    assert replaced["tournament"] == replaced["race"] == tid
    seat = await again.next_event("round", timeout=T)
    assert seat["round"] == 1  # e1 against e2 (e3 was taken out: a two-entrant bracket)
    view = await again.request({"type": "tournament_watch", "tournament": tid})
    assert view["bracket"]["matches"][0]["entrants"] == ["e1", "e2"]
    await host_request(host, "finish", tid, htoken)
    assert (await again.next_event("tournament_over", timeout=T))["standings"]


async def test_a_restart_mid_tournament_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    proc, addr = await start_server(db)
    url = f"ws://{addr}/ws"
    try:
        host = await RaceClient.connect(url)
        created = await host.request({"type": "tournament_create", "name": "Night",
                                      "format": "rounds", "games": ["scotch"], "rounds": 2,
                                      "race_size": 2, "gap": 0, "grace": 30})
        tid, htoken = created["tournament"], created["host_token"]
        entrants = []
        for name in ("ann", "bob", "cid", "dan"):
            e = Entrant(await RaceClient.connect(url), tid)
            await e.join(name)
            entrants.append(e)
        await host_request(host, "start", tid, htoken)
        seats = [await e.seat() for e in entrants]
        for e, s in zip(entrants, seats, strict=True):
            await e.take(s)
        for e, s in zip(entrants, seats, strict=True):
            await e.client.wait_state(s["race"], T)
        first_race = seats[0]["race"]
        for e, s in zip(entrants, seats, strict=True):
            if s["race"] == first_race:
                await e.client.resign(first_race)
        await entrants[0].client.next_event("race_over", timeout=T)
        await asyncio.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    proc, addr = await start_server(db)
    url = f"ws://{addr}/ws"
    try:
        host = await RaceClient.connect(url)
        watch = await host.request({"type": "tournament_watch", "tournament": tid})
        assert watch["status"] == "running" and len(watch["rounds"]) == 1
        assert list(watch["rounds"][0]["results"]) == [first_race]  # the result was kept
        # The other race of round 1 goes on: its entrants come back and finish it.
        clients = []
        for e, s in zip(entrants, seats, strict=True):
            if s["race"] != first_race:
                c = await RaceClient.connect(url)
                await c.request({"type": "tournament_join", "tournament": tid,
                                 "token": e.token})
                seat = await c.next_event("round", timeout=T)  # he is told his seat again
                assert seat["race"] == s["race"]
                await c.join(s["race"], token=seat["token"])
                await c.wait_state(s["race"], T)
                clients.append((c, s["race"]))
        for c, race in clients:
            await c.resign(race)
        standings = await host.next_event("standings", timeout=T)
        assert standings["round"] == 1
        await host_request(host, "next", tid, htoken)  # and the next round can start
        async with asyncio.timeout(T):
            while len((view := await host.next_event("tournament"))["rounds"]) < 2:
                pass
        assert view["rounds"][1]["status"] == "running"
    finally:
        stop(proc)



