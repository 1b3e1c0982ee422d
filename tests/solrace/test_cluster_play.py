"""Quick races, players and ratings across ``solrace serve`` processes on one real Redis: two
seekers on two processes are paired into one race, rated once, and a player is the same
player whichever process his browser reaches. The queue is one for all processes: one seek
per player whatever process his tabs reach, a no-show ends the race and bars him, two waiting
seekers are paired as their windows widen by whichever process runs the pass, and a rated
queue never pairs one network."""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.request
from typing import Any

import msgpack
import pytest
from solrace.runtime.redis_connect import connect
from solrace.settings import SEAT_GRACE_S
from solrace.store.redis_players import pkey
from solrace.tools.race_client import RaceClient, ServerError

from .conftest import T
from .servers import RedisServer, Solrace
from .test_fairplay_server import three_moves


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, headers=headers or {})
    with opener.open(req, timeout=T) as res:
        body = res.read()
        return (json.loads(body) if body.startswith((b"{", b"[")) else body,
                {k.lower(): v for k, v in res.getheaders()})


async def browser(proc: Solrace, name: str, address: str = "", password: bool = True,
                  key: str = "") -> tuple[RaceClient, str]:
    """A browser at ``address`` (one of its own unless given; the processes trust
    ``X-Forwarded-For``) on ``proc``, named ``name`` and, with ``password``, an account (it
    plays rated races). ``key``: the cookie of a browser already made (another tab)."""
    address = address or f"198.51.100.{next(_addresses) % 250 + 1}"
    if not key:
        _, headers = await asyncio.to_thread(fetch, proc.http + "/",
                                             {"X-Forwarded-For": address})
        key = headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]
    client = await RaceClient.connect(proc.url, additional_headers={
        "Cookie": f"sr_player={key}", "X-Forwarded-For": address})
    if name:
        await client.request({"type": "set_name", "name": name})
        if password:
            await client.request({"type": "set_password", "password": f"{name} password"})
    return client, key


_addresses = itertools.count(1)
SEEK = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}


async def refused(client: RaceClient, msg: dict[str, Any]) -> str:
    with pytest.raises(ServerError) as err:
        await client.request(msg)
    return err.value.code


async def test_two_seekers_on_two_processes_race_and_are_rated_once(
        redis: RedisServer) -> None:
    a = await Solrace(redis.url, "--trust-proxy").start()
    b = await Solrace(redis.url, "--trust-proxy").start()
    try:
        ann, ann_key = await browser(a, "Ann", "192.0.2.1")
        bob, _ = await browser(b, "Bob")
        seeking = await ann.request({"type": "seek", "game": "yukon", "time_limit": 180,
                                     "bot_after": 0})
        assert seeking["type"] == "seeking"
        paired_bob = await bob.request({"type": "seek", "game": "yukon", "time_limit": 180})
        paired_ann = await ann.next_event("paired", timeout=T)
        race = paired_bob["race"]
        assert paired_ann["race"] == race and paired_bob["opponents"][0]["name"] == "Ann"
        await ann.join(race, token=paired_ann["token"])
        await bob.join(race, token=paired_bob["token"])
        await ann.wait_state(race, T * 2)
        await bob.wait_state(race, T * 2)
        for client in (ann, bob):  # three moves each: committed to the race
            await three_moves(client, race)
        await ann.resign(race)  # a resign is a loss: Bob wins at once
        over = await ann.next_event("race_over", timeout=T)
        assert over["reason"] == "resigned" and over["standings"][0]["name"] == "Bob"
        ratings = await ann.next_event("ratings", timeout=T * 2)
        assert ratings["rated"] is True and len(ratings["changes"]) == 2
        deltas = {c["player"]: c["delta"] for c in ratings["changes"]}
        assert deltas[paired_ann["player"]] < 0 < deltas[paired_bob["player"]]
        # The same player on either process, with the same rating.
        page_a, _ = await asyncio.to_thread(fetch, a.http + "/api/players/Ann")
        page_b, _ = await asyncio.to_thread(fetch, b.http + "/api/players/ann")
        assert page_a == page_b and page_a["ratings"]["yukon"]["races"] == 1
        other, _ = await browser(b, "", "192.0.2.1", key=ann_key)
        me = await other.request({"type": "me"})
        assert me["player"]["name"] == "Ann" and me["player"]["ratings"]["yukon"]["races"] == 1
        for client in (ann, bob, other):
            await client.close()
    finally:
        a.stop()
        b.stop()


async def test_one_seek_per_player_on_every_process_and_a_no_show(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    # The griefer's tabs on both processes: his second seek replaces the first.
    tab_a, key = await browser(a, "Grief", "203.0.113.66")
    tab_b, _ = await browser(b, "", "203.0.113.66", key=key)
    assert (await tab_a.request(SEEK))["type"] == "seeking"
    assert (await tab_b.request(SEEK))["type"] == "seeking"
    assert (await tab_a.next_event("seek_ended", timeout=T))["reason"] == "replaced"
    ann, _ = await browser(a, "Ann")
    paired = await ann.request(SEEK)
    assert paired["type"] == "paired" and paired["opponents"][0]["name"] == "Grief"
    await tab_b.next_event("paired", timeout=T)
    assert await refused(tab_a, SEEK) == "seat_waiting"  # sit first
    bob, _ = await browser(b, "Bob")
    assert (await bob.request(SEEK))["type"] == "seeking"  # no second griefer seek
    await ann.join(paired["race"], token=paired["token"])
    # The griefer never sits: at the end of the grace the race ends, nobody races alone.
    over = await ann.next_event("race_over", "countdown", "started",
                                timeout=SEAT_GRACE_S + T * 2)
    assert over["type"] == "race_over" and over["reason"] == "no_show"
    again = await ann.request(SEEK)  # back in the queue: Bob waits there (on the other process)
    assert again["type"] == "paired" and again["opponents"][0]["name"] == "Bob"
    assert (await bob.next_event("paired", timeout=T))["race"] == again["race"]
    assert await refused(tab_b, SEEK) == "no_show"
    for client in (tab_a, tab_b, ann, bob):
        await client.close()


async def test_two_waiting_seekers_on_two_processes_are_paired_as_windows_widen(
        pair: tuple[Solrace, Solrace], redis: RedisServer) -> None:
    a, b = pair
    hi, _ = await browser(a, "High")
    lo, _ = await browser(b, "Low")
    client = connect(redis.url)
    for who, mu in ((hi, 2092.0), (lo, 1500.0)):
        pid = (await who.request({"type": "me"}))["player"]["id"]
        await client.hset(pkey(f"r:{pid}"), "scotch", msgpack.packb([mu, 80.0, 40]))
    await client.aclose()
    assert (await hi.request(SEEK))["type"] == "seeking"
    assert (await lo.request(SEEK))["type"] == "seeking"  # 592 apart: not yet
    # Within the elder's window after 8.84 s: a pass of either process pairs them then.
    got = await hi.next_event("paired", timeout=9 + T * 2)
    assert got["opponents"][0]["name"] == "Low" and got["rated"] is True
    assert (await lo.next_event("paired", timeout=T))["race"] == got["race"]
    for c in (hi, lo):
        await c.close()


async def test_a_rated_queue_never_pairs_one_network_across_processes(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    ann, _ = await browser(a, "Ann", "203.0.113.7")
    bob, _ = await browser(b, "Bob", "203.0.113.7")
    assert (await ann.request(SEEK))["type"] == "seeking"
    assert (await bob.request(SEEK))["type"] == "seeking"
    cat, _ = await browser(b, "Cat")  # another network: paired with one of them
    paired = await cat.request(SEEK)
    assert paired["type"] == "paired" and paired["opponents"][0]["name"] in ("Ann", "Bob")
    left = bob if paired["opponents"][0]["name"] == "Ann" else ann
    dan, _ = await browser(a, "Dan", "203.0.113.7")  # casual: one network may race
    assert (await dan.request({**SEEK, "rated": False}))["type"] == "seeking"
    casual = await left.request({**SEEK, "rated": False})
    assert casual["type"] == "paired" and casual["opponents"][0]["name"] == "Dan"
    for c in (ann, bob, cat, dan):
        await c.close()
