"""A dead process is known by its inbox's link, not by its lease lapsing
(:mod:`solrace.cluster.deaths`): on a real Redis, the looks themselves, the takeover of a lease
whose holder is dead, and two ``solrace serve`` processes — one killed, its lease and ``alive``
key made to last ten minutes — where the other takes the race over at once."""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from solrace.cluster.deaths import Deaths
from solrace.runtime.redis_connect import connect, key, proc_key, unit_of
from solrace.settings import GONE_AFTER
from solrace.store.redis_store import RedisStore
from solrace.tools.race_client import RaceClient

from .conftest import T
from .servers import RedisServer, Solrace, make_cluster
from .test_cluster import act, racing, rejoin

pytestmark = pytest.mark.xdist_group("redis-deaths")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def client(redis: RedisServer) -> AsyncIterator[aioredis.Redis]:
    c = aioredis.Redis.from_url(redis.url)
    yield c
    await c.aclose()


async def listen(url: str, pid: str) -> Any:
    """A link subscribed to ``pid``'s inbox, as a live process holds one."""
    link = aioredis.Redis.from_url(url).pubsub()
    await link.ssubscribe(proc_key(pid, "in"))
    await link.get_message(timeout=1.0)  # the confirmation
    return link


async def hang_up(link: Any, deaths: Deaths, pid: str) -> None:
    """Close ``link`` and wait until Redis has dropped it (at once, but not in the same
    round trip)."""
    await link.aclose()
    async with asyncio.timeout(T):
        while pid not in await deaths.silent([pid]):
            await asyncio.sleep(0.01)


async def test_a_process_is_gone_at_two_silent_looks_far_enough_apart(
        redis: RedisServer, client: aioredis.Redis) -> None:
    clock = Clock()
    deaths = Deaths(client, clock)
    alive, dying = await listen(redis.url, "111-aa"), await listen(redis.url, "222-bb")
    assert await deaths.silent(["111-aa", "222-bb", "333-cc"]) == {"333-cc"}
    await hang_up(dying, deaths, "222-bb")  # as a kernel closes a killed process's link
    assert await deaths.silent(["111-aa", "222-bb"]) == {"222-bb"}
    assert await deaths.gone(["111-aa", "222-bb"]) == set()  # one look is not enough
    clock.now += GONE_AFTER / 2
    assert await deaths.gone(["111-aa", "222-bb"]) == set()  # nor two too close
    clock.now += GONE_AFTER / 2
    assert await deaths.gone(["111-aa", "222-bb"]) == {"222-bb"}
    await alive.aclose()


async def test_a_process_heard_between_two_silent_looks_is_not_gone(
        redis: RedisServer, client: aioredis.Redis) -> None:
    """Its link was lost and made again (a blip): the count starts again."""
    clock = Clock()
    deaths = Deaths(client, clock)
    assert await deaths.gone(["444-dd"]) == set()
    clock.now += GONE_AFTER
    link = await listen(redis.url, "444-dd")
    assert await deaths.gone(["444-dd"]) == set()
    await hang_up(link, deaths, "444-dd")
    assert await deaths.gone(["444-dd"]) == set()  # silent since now, not since the first
    clock.now += GONE_AFTER / 2
    assert await deaths.gone(["444-dd"]) == set()
    clock.now += GONE_AFTER / 2
    assert await deaths.gone(["444-dd"]) == {"444-dd"}


async def test_only_a_dead_holders_lease_is_taken_before_it_lapses(redis: RedisServer) -> None:
    store = RedisStore(connect(redis.url), pid="taker-01")
    await store.start()
    try:
        lease = key("r-x", "lease")
        await store.client.set(lease, "victim-02:7", px=600_000)
        assert await store.acquire("r-x") == "victim-02"  # alive as far as anyone knows
        assert await store.acquire("r-x", dead="victim-0") == "victim-02"  # not a prefix
        assert await store.acquire("r-x", dead="other-03") == "victim-02"
        assert await store.acquire("r-x", dead="victim-02") is None
        epoch = store.epochs["r-x"]
        assert await store.client.get(lease) == f"taker-01:{epoch}".encode()
        assert await store.client.pttl(lease) <= 1500  # a lease of its own length
    finally:
        await store.client.aclose()


@pytest.mark.parametrize("where", ["redis", "cluster"])
async def test_a_killed_owner_is_replaced_before_its_lease_lapses(
        tmp_path: Path, where: str) -> None:
    """The owner is stopped, its lease and ``alive`` key set to last ten minutes, then
    killed: the race goes on on the other process (it could only be taken by knowing the
    owner dead), every acknowledged move kept."""
    nodes = (make_cluster(tmp_path / "cluster") if where == "cluster"
             else [RedisServer(tmp_path / "redis")])
    url = (f"redis+cluster://127.0.0.1:{nodes[0].port}" if where == "cluster"
           else nodes[0].url)
    procs: list[Solrace] = []
    clients: list[RaceClient] = []
    try:
        p1 = await Solrace(url).start()
        procs.append(p1)
        p2 = await Solrace(url).start()
        procs.append(p2)
        host = await RaceClient.connect(p1.url)
        created = await host.create("scotch", players=2, seed=5, time_limit=600)
        race = created["race"]
        ann, bob = await racing(race, created["host_token"], host, p1.url, p2.url)
        clients += [host, ann, bob]
        rng = random.Random(3)
        acked: dict[str, list[str]] = {"ann": [], "bob": []}
        for _ in range(4):
            acked["ann"].append((await act(ann, race, rng))[0])
            acked["bob"].append((await act(bob, race, rng))[0])
        rc = connect(url)
        assert p1.proc is not None
        holder = (await rc.get(key(unit_of(race), "lease"))).decode()
        pid = holder.rpartition(":")[0]
        # Heard while alive, whichever node serves its inbox's slot.
        assert await Deaths(rc, lambda: 0.0).silent([pid]) == set()
        p1.proc.send_signal(signal.SIGSTOP)  # no renewal from here on
        assert await rc.pexpire(key(unit_of(race), "lease"), 600_000)
        assert await rc.pexpire(proc_key(pid, "alive"), 600_000)
        p1.kill()
        again = await rejoin(p2.url, race, ann.tokens[race])
        clients.append(again)
        state = await again.wait_state(race, T * 2)
        assert state["seq"] == len(acked["ann"])
        for _ in range(3):
            acked["ann"].append((await act(again, race, rng, retries=int(T * 30)))[0])
            acked["bob"].append((await act(bob, race, rng))[0])
        assert (await rc.get(key(unit_of(race), "lease"))).decode().rpartition(":")[0] != pid
        await again.resign(race)
        await bob.resign(race)
        over = await bob.next_event("race_over", timeout=T)
        assert over["seed"] == "5"  # told once the race is over, by the new owner
        await rc.aclose()
    finally:
        for c in clients:
            await c.close()
        for p in procs:
            p.stop()
        for node in nodes:
            node.stop()
