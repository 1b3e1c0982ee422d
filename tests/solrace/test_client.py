"""The Python client and the bot against a real server."""

from __future__ import annotations

import asyncio
import random

import pytest
from solrace.tools.bot import choose, play
from solrace.tools.cli import parser
from websockets.exceptions import ConnectionClosed

from .conftest import Server, T


def test_greedy_prefers_foundation_moves() -> None:
    state = {"legal": ["t1>t2", "t3>f1", "f2>t4"]}
    rng = random.Random(1)
    assert {choose(state, "greedy", rng) for _ in range(20)} == {"t3>f1"}
    assert choose({"legal": []}, "random", rng) is None
    assert {choose(state, "random", rng) for _ in range(50)} == set(state["legal"])


async def test_two_bots_race_to_the_end(server: Server) -> None:
    host = await server.client()
    race = (await host.create("scotch", players=2, seed=11))["race"]
    watcher = await server.client()
    await watcher.watch(race)
    results = await asyncio.wait_for(
        asyncio.gather(
            play(server.url, race, "one", "greedy", delay=0, max_moves=60, seed=1),
            play(server.url, race, "two", "random", delay=0, max_moves=60, seed=2),
        ),
        T * 4,
    )
    assert all(r["seq"] > 0 for r in results)
    over = await watcher.next_event("race_over", timeout=T)
    assert {s["name"] for s in over["standings"]} == {"one", "two"}


async def test_a_bot_that_makes_no_progress_gives_up(server: Server) -> None:
    host = await server.client()
    race = (await host.create("scotch", players=2, seed=11))["race"]
    human = await server.client()
    await human.join(race, name="ann")
    await human.ready(race)
    bot = asyncio.ensure_future(play(server.url, race, "loops", "random", delay=0,
                                     max_moves=10_000, seed=3, give_up=4))
    state = await asyncio.wait_for(bot, T * 2)
    # It stopped long before max_moves, by resigning: a race of two, the human has won.
    assert state["seq"] < 200
    snap = await human.watch(race)
    bots = [p for p in snap["players"] if p["bot"]]
    assert bots[0]["resigned"] is True and snap["status"] == "finished"
    assert snap["reason"] == "resigned" and snap["standings"][0]["name"] == "ann"


async def test_requests_fail_once_the_connection_is_closed(server: Server) -> None:
    client = await server.client()
    assert (await client.ping())["type"] == "pong"
    await client.ws.close()
    with pytest.raises((ConnectionError, ConnectionClosed)):
        await client.ping()


async def test_waiting_for_a_state_ends_when_the_connection_closes(server: Server) -> None:
    # A bot that rejoined a server about to go away waits for the race's state: the closed
    # connection must end that wait at once (it then moves on to the next server), not after
    # the wait's timeout (an hour in the bot).
    host = await server.client()
    race = (await host.create("scotch", players=2, seed=11))["race"]
    client = await server.client()
    await client.join(race, name="ann")  # not started: no state comes
    waiting = asyncio.ensure_future(client.wait_state(race, timeout=T * 10))
    await asyncio.sleep(0.05)
    await client.ws.close()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(waiting, T)


def test_cli_parses_serve_and_bot() -> None:
    args = parser().parse_args(["serve", "--port", "0", "--rate-limit", "0"])
    assert args.port == 0 and args.rate_limit == 0 and args.host == "127.0.0.1"
    args = parser().parse_args(["bot", "--race", "abc", "--policy", "random"])
    assert args.race == "abc" and args.policy == "random"
