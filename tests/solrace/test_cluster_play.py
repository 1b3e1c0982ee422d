"""Quick races, players and ratings across ``solrace serve`` processes on one real Redis: two
seekers on two processes are paired into one race, rated once, and a player is the same
player whichever process his browser reaches."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient

from .conftest import T
from .servers import RedisServer, Solrace


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    yield server
    server.stop()


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, headers=headers or {})
    with opener.open(req, timeout=T) as res:
        body = res.read()
        return (json.loads(body) if body.startswith((b"{", b"[")) else body,
                {k.lower(): v for k, v in res.getheaders()})


async def browser(proc: Solrace, name: str) -> tuple[RaceClient, str]:
    _, headers = await asyncio.to_thread(fetch, proc.http + "/")
    key = headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]
    client = await RaceClient.connect(proc.url, additional_headers={
        "Cookie": f"sr_player={key}"})
    await client.request({"type": "set_name", "name": name})
    return client, key


async def test_two_seekers_on_two_processes_race_and_are_rated_once(
        redis: RedisServer) -> None:
    a = await Solrace(redis.url).start()
    b = await Solrace(redis.url).start()
    try:
        ann, ann_key = await browser(a, "Ann")
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
        await ann.resign(race)
        await bob.resign(race)
        over = await ann.next_event("race_over", timeout=T)
        assert over["reason"] == "done"
        ratings = await ann.next_event("ratings", timeout=T * 2)
        assert ratings["rated"] is True and len(ratings["changes"]) == 2
        # The same player on either process, with the same rating.
        page_a, _ = await asyncio.to_thread(fetch, a.http + "/api/players/Ann")
        page_b, _ = await asyncio.to_thread(fetch, b.http + "/api/players/ann")
        assert page_a == page_b and page_a["ratings"]["yukon"]["races"] == 1
        other = await RaceClient.connect(b.url, additional_headers={
            "Cookie": f"sr_player={ann_key}"})
        me = await other.request({"type": "me"})
        assert me["player"]["name"] == "Ann" and me["player"]["ratings"]["yukon"]["races"] == 1
        for client in (ann, bob, other):
            await client.close()
    finally:
        a.stop()
        b.stop()
