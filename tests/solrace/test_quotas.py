"""Fair shares: one client, or a hundred addresses, cannot fill a cap that others need
(solrace.core.quotas), on a real server whose clients come from many forwarded addresses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from solrace.core.quotas import client_key, refusal
from solrace.tools.race_client import RaceClient, ServerError
from websockets.exceptions import InvalidStatus

from .conftest import Server, T


def test_a_share_per_address_and_a_reserve_for_newcomers() -> None:
    assert refusal(held=0, used=99, cap=100, share=10) is None  # a newcomer gets the last one
    assert refusal(held=0, used=100, cap=100, share=10) == "full"
    assert refusal(held=10, used=5, cap=100, share=10) == "share"
    assert refusal(held=1, used=80, cap=100, share=10) == "reserve"  # the last fifth
    assert refusal(held=0, used=80, cap=100, share=10) is None
    assert refusal(held=2, used=79, cap=100, share=10) is None
    assert refusal(held=0, used=0, cap=100, share=10, need=11) == "share"


def test_an_ipv6_client_is_its_network() -> None:
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9")
    assert client_key("2001:db8:1:2::1") != client_key("2001:db8:1:3::1")
    assert client_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert client_key("203.0.113.9") == "203.0.113.9" and client_key("unix") == "unix"


async def from_address(server: Server, address: str, **kw: Any) -> RaceClient:
    client = await RaceClient.connect(server.url, additional_headers={
        "X-Forwarded-For": address}, **kw)
    server.clients.append(client)
    return client


async def code_of(coro: Any) -> str:
    with pytest.raises(ServerError) as info:
        await coro
    return info.value.code


async def test_a_hundred_addresses_cannot_take_every_race(server: Server) -> None:
    caps = server.app.hub.caps
    caps.races, caps.races_per_address, caps.lobbies = 500, 25, 10
    server.app.routes.trust_proxy = True
    refused = 0
    for i in range(100):
        flood = await from_address(server, f"198.51.100.{i}")
        for _ in range(10):
            try:
                await flood.create("scotch")
            except ServerError as exc:
                assert exc.code == "limit_reached"
                refused += 1
        await flood.close()
    # 40 addresses fill the cap up to its reserve (100 races) with 10 lobbies each; the
    # other 60 get one race each from the reserve, no more.
    held = len(server.app.races)
    assert held == 460 and refused == 1000 - 460
    # A newcomer still gets a race, and so does the next one.
    for newcomer in ("203.0.113.7", "203.0.113.8"):
        client = await from_address(server, newcomer)
        assert (await client.create("scotch"))["type"] == "created"


async def test_one_address_holds_its_share_of_races(server: Server) -> None:
    caps = server.app.hub.caps
    caps.races_per_address, caps.lobbies = 4, 10
    one = await server.client()
    for _ in range(4):
        await one.create("scotch")
    assert await code_of(one.create("scotch")) == "limit_reached"


async def test_tournaments_per_address_and_an_unstarted_one_closes(server: Server) -> None:
    server.app.hub.caps.tournaments_per_address = 2
    host = await server.client()
    ids = []
    for i in range(2):
        created = await host.request({"type": "tournament_create", "name": f"Cup {i}",
                                      "format": "rounds", "games": ["scotch"]})
        ids.append(created["tournament"])
    assert await code_of(host.request({"type": "tournament_create", "name": "Cup 3",
                                       "format": "rounds", "games": ["scotch"]})) == \
        "limit_reached"
    # Nobody enters the first: it expires (here, by moving its clock), and the place is free.
    t = server.app.hub.organizer.tournaments[ids[0]]
    t.created_at -= 3600 * 1000
    server.app.hub.organizer.deadlines.set(t.tid, t.next_deadline())
    watcher = await server.client()
    await watcher.request({"type": "tournament_watch", "tournament": ids[0]})
    async with asyncio.timeout(T):
        while t.status != "finished":
            await asyncio.sleep(0.01)
    assert t.reason == "expired"
    view = await watcher.request({"type": "tournament_watch", "tournament": ids[0]})
    assert view["status"] == "finished" and view["reason"] == "expired"
    created = await host.request({"type": "tournament_create", "name": "Cup 3",
                                  "format": "rounds", "games": ["scotch"]})
    assert created["type"] == "tournament_created"


async def test_one_connection_enters_once_and_an_address_has_a_share(server: Server) -> None:
    server.app.hub.caps.entrants_per_address = 3
    server.app.routes.trust_proxy = True
    host = await server.client()
    tid = (await host.request({"type": "tournament_create", "name": "Open", "format": "rounds",
                               "games": ["scotch"], "max_entrants": 20}))["tournament"]

    def join(name: str) -> dict[str, Any]:
        return {"type": "tournament_join", "tournament": tid, "name": name}

    one = await from_address(server, "198.51.100.1")
    first = await one.request(join("ann"))
    again = await one.request(join("ann again"))
    assert again["entrant"] == first["entrant"]  # the same entrant back
    for name in ("bob", "cid"):
        await (await from_address(server, "198.51.100.1")).request(join(name))
    late = await from_address(server, "198.51.100.1")
    assert await code_of(late.request(join("dan"))) == "limit_reached"
    # Other networks fill it up to the reserve; the last places go to networks with none.
    for i in range(2, 15):
        await (await from_address(server, f"198.51.100.{i}")).request(join(f"e{i}"))
    view = await host.request({"type": "tournament_watch", "tournament": tid})
    assert len(view["entrants"]) == 16
    crowd = await from_address(server, "198.51.100.2")
    assert await code_of(crowd.request(join("second from 2"))) == "tournament_full"
    newcomer = await from_address(server, "203.0.113.50")
    assert (await newcomer.request(join("new")))["type"] == "tournament_joined"


async def test_a_tournaments_rounds_count_against_the_race_cap(server: Server) -> None:
    caps = server.app.hub.caps
    caps.races = 10
    host = await server.client()
    created = await host.request({"type": "tournament_create", "name": "Big", "format":
                                  "knockout", "games": ["scotch"]})
    tid, token = created["tournament"], created["host_token"]
    for i in range(20):  # a knockout of 20: its first games are 10 races, over the cap
        c = await server.client()
        await c.request({"type": "tournament_join", "tournament": tid, "name": f"p{i}"})
    assert await code_of(host.request({"type": "tournament_start", "tournament": tid,
                                       "token": token})) == "limit_reached"
    caps.races = 100
    assert (await host.request({"type": "tournament_start", "tournament": tid,
                                "token": token}))["type"] == "ok"
    assert len(server.app.races) == 4  # 20 entrants in a bracket of 32: 12 byes, 4 games
    # A race created now counts with the tournament's.
    caps.races = 5
    other = await server.client()
    await other.create("scotch")
    assert await code_of(other.create("scotch")) == "limit_reached"


async def test_connections_per_address(server: Server) -> None:
    server.app.hub.caps.connections_per_address = 3
    server.app.routes.trust_proxy = True
    held = [await from_address(server, "198.51.100.1") for _ in range(3)]
    with pytest.raises(InvalidStatus) as info:
        await from_address(server, "198.51.100.1")
    assert info.value.response.status_code == 429
    assert (await (await from_address(server, "198.51.100.2")).ping())["type"] == "pong"
    for c in held:
        await c.close()
