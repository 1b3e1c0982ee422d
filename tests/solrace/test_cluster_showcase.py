"""The home page's live figures over two ``solrace serve`` processes on one real Redis: both
answer the same totals — each player counted once whichever processes his tabs reach, every
process's races, the best race of all featured — and a process that stops drops out of them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
from solrace.runtime.redis_connect import connect
from solrace.store.redis_players import pkey
from solrace.tools.race_client import RaceClient

from .conftest import T
from .servers import RedisServer, Solrace
from .test_cluster_play import SEEK, browser, fetch


async def live(proc: Solrace) -> dict[str, Any]:
    answer, _ = await asyncio.to_thread(fetch, proc.http + "/api/live")
    return dict(answer)


async def both_until(procs: tuple[Solrace, ...], ok: Callable[[dict[str, Any]], bool],
                     timeout: float = T * 3) -> list[dict[str, Any]]:
    """``GET /api/live`` of every process until each answer satisfies ``ok``."""
    deadline = time.monotonic() + timeout
    while True:
        answers = [await live(p) for p in procs]
        if all(ok(a) for a in answers):
            return answers
        if time.monotonic() > deadline:
            pytest.fail(f"never came: {answers}")
        await asyncio.sleep(0.25)


def featured(answer: dict[str, Any]) -> str | None:
    f = answer["featured"]
    return None if f is None else str(f["race"])


async def race_of_two(first: Any, second: Any, seek: dict[str, Any]) -> str:
    """``first`` seeks, ``second`` is paired with him; both sit and the race runs."""
    assert (await first.request(seek))["type"] == "seeking"
    paired = await second.request(seek)
    assert paired["type"] == "paired"
    race = str(paired["race"])
    await second.join(race, token=paired["token"])
    got = await first.next_event("paired", timeout=T)
    await first.join(race, token=got["token"])
    await first.wait_state(race, T * 2)
    await second.wait_state(race, T * 2)
    return race


async def test_the_figures_are_everyone_s_on_every_process(
        pair: tuple[Solrace, Solrace], redis: RedisServer) -> None:
    a, b = pair
    # Two guests, one on each process, race casually.
    cat, _ = await browser(a, "Cat", password=False)
    dan, _ = await browser(b, "Dan", password=False)
    guests = await race_of_two(cat, dan, SEEK)
    # Each figure is published on its own beat: wait until all say what is expected.
    answers = await both_until((a, b), lambda x: x["races_running"] == 1
                               and x["players_online"] == 2 and featured(x) == guests)
    assert [featured(x) for x in answers] == [guests, guests]
    assert [x["players_online"] for x in answers] == [2, 2]
    # Two strong accounts race rated, on the two processes too: theirs is featured everywhere,
    # whichever process runs it.
    ann, ann_key = await browser(b, "Ann")
    bob, _ = await browser(a, "Bob")
    client = connect(redis.url)
    for who, mu in ((ann, 2010.0), (bob, 1990.0)):
        pid = (await who.request({"type": "me"}))["player"]["id"]
        await client.hset(pkey(f"r:{pid}"), "scotch", msgpack.packb([mu, 80.0, 40]))
    await client.aclose()
    strong = await race_of_two(ann, bob, SEEK)
    answers = await both_until((a, b), lambda x: x["races_running"] == 2
                               and x["players_online"] == 4 and featured(x) == strong)
    assert [featured(x) for x in answers] == [strong, strong]
    view = answers[0]["featured"]
    assert view["rated"] is True and sorted(r["rating"] for r in view["racers"]) == [1990, 2010]
    assert [x["players_online"] for x in answers] == [4, 4]
    # Ann's second tab, on the other process: still one Ann (a sum of the processes' counts
    # would say two). A client without the cookie counts once per connection.
    tab, _ = await browser(a, "", key=ann_key)
    anonymous = await RaceClient.connect(a.url)
    answers = await both_until((a, b), lambda x: x["players_online"] == 5)
    assert [x["players_online"] for x in answers] == [5, 5]
    # The featured race ends: the next one is featured everywhere.
    await bob.resign(strong)
    await ann.next_event("race_over", timeout=T)
    answers = await both_until((a, b), lambda x: x["races_running"] == 1
                               and featured(x) == guests)
    assert [featured(x) for x in answers] == [guests, guests]
    # A process that stops drops out of the figures (it takes them with it as it stops): Dan
    # (on b only) is gone, Ann stays (her tab on a).
    assert b.terminate() < T * 2
    answer = (await both_until((a,), lambda x: x["players_online"] == 4))[0]
    assert answer["players_online"] == 4
    for c in (cat, dan, ann, bob, tab, anonymous):
        await c.close()
