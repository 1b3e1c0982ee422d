"""The quick-race queues, in memory (one process) and in Redis (a real ``redis-server`` on a
free port, shared by several processes), held to one contract: one seek per player, the
pairing rule at once and in passes as windows widen, the rated queue's rules (never one
network, the previous opponent last), no-shows, seekers given back. And the two run the same
random queues to the same pairs (the Lua scripts keep in step with solrace.core.pairing)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from solrace.cluster.queues import RedisQueues
from solrace.core.pairing import Seek, pairs
from solrace.runtime.redis_connect import connect, proc_key
from solrace.service.matchmaker import LocalQueues

from .servers import RedisServer, make_cluster

R = "scotch:300:r"
C = "scotch:300:c"


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def seek(sid: str, player: str, rating: float, since: int = 0, queue: str = R,
         network: str = "", process: str = "p1") -> Seek:
    return Seek(sid, queue, player, player.upper(), rating, since, process, 1,
                network=network or f"net-{player}")


async def redis_queues(redis: RedisServer, process: str = "p1") -> Any:
    client = connect(redis.url)
    await client.flushdb()
    for pid in ("p1", "p2"):
        await client.set(proc_key(pid, "alive"), "1")
    return RedisQueues(client, process)


@pytest.fixture(params=["memory", "redis"])
async def queues(request: pytest.FixtureRequest, redis: RedisServer) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield LocalQueues(cap=3)
        return
    import solrace.cluster.queues as module

    old = module.QUEUE_CAP
    module.QUEUE_CAP = 3
    q = await redis_queues(redis)
    yield q
    module.QUEUE_CAP = old
    await q.client.aclose()


def ids(found: list[tuple[Seek, Seek]]) -> list[tuple[str, str]]:
    return [(a.id, b.id) for a, b in found]


async def test_queues_pair_by_the_same_rule(queues: Any) -> None:
    now = 100_000
    assert (await queues.offer(seek("a", "pa", 1500, now), now)).match is None
    again = await queues.offer(seek("a2", "pa", 1500, now), now)  # never himself: replaced
    assert again.match is None and again.replaced.id == "a"
    assert (await queues.offer(seek("b", "pb", 1900, now), now)).match is None  # too far
    got = (await queues.offer(seek("c", "pc", 1600, now), now)).match
    assert got is not None and got.id == "a2"  # the closest within the window
    assert not (await queues.offer(seek("d", "pd", 3000, now), now)).full
    assert not (await queues.offer(seek("e", "pe", 9000, now), now)).full
    full = await queues.offer(seek("g", "pg", 20000, now), now)  # three wait: full
    assert full.full and full.match is None
    # After the window widened (8 s: 150 + 400), b takes someone 500 away.
    later = now + 8_000
    got = (await queues.offer(seek("f", "pf", 1400, later), later)).match
    assert got is not None and got.id == "b"
    assert not await queues.cancel(seek("b", "pb", 1900))  # paired: not waiting
    assert await queues.cancel(seek("d", "pd", 3000))
    assert not await queues.cancel(seek("zz", "pz", 1500))


async def test_one_seek_per_player_whatever_the_queue(queues: Any) -> None:
    now = 100_000
    await queues.offer(seek("a", "pa", 1500, now), now)
    moved = await queues.offer(seek("a2", "pa", 1500, now, queue="yukon:180:c"), now)
    assert moved.replaced.id == "a" and moved.match is None
    # Nobody is paired with the seek that was replaced.
    assert (await queues.offer(seek("b", "pb", 1500, now), now)).match is None
    assert not await queues.cancel(seek("a", "pa", 1500))
    assert (await queues.offer(seek("c", "pc", 1500, now, queue="yukon:180:c"),
                               now)).match.id == "a2"
    assert await queues.pair_waiting(now + 60_000) == []  # b alone


async def test_a_rated_queue_never_pairs_one_network(queues: Any) -> None:
    now = 100_000
    assert (await queues.offer(seek("a", "pa", 1500, now, network="cafe"), now)).match is None
    assert (await queues.offer(seek("b", "pb", 1500, now, network="cafe"), now)).match is None
    assert await queues.pair_waiting(now + 60_000) == []  # not even after 17 s
    # Casual: friends in a café race each other.
    assert (await queues.offer(seek("c", "pc", 1500, now, C, network="cafe"),
                               now)).match is None
    assert (await queues.offer(seek("d", "pd", 1500, now, C, network="cafe"),
                               now)).match.id == "c"
    # Anyone else is paired with one of them (the one who waited longest on a tie).
    assert (await queues.offer(seek("e", "pe", 1500, now + 1), now + 1)).match.id == "a"


async def test_the_previous_opponent_comes_last_in_a_rated_queue(queues: Any) -> None:
    now = 100_000
    for queue, expected in ((R, "z"), (C, "y")):
        x, y, z = (f"{p}{queue[-1]}" for p in "xyz")
        await queues.offer(seek(y, y, 1500, now, queue), now)
        assert (await queues.offer(seek(x, x, 1550, now, queue), now)).match.id == y  # a race
        # Again: y waits, then z (200 from y: they do not fit), then x (50 from y, 150 from
        # z). Rated: x gets z, although y is closer; casual: y.
        await queues.offer(seek(y + "2", y, 1500, now + 1, queue), now + 1)
        await queues.offer(seek(z, z, 1700, now + 2, queue), now + 2)
        got = await queues.offer(seek(x + "2", x, 1550, now + 3, queue), now + 3)
        assert got.seek.last == y and got.match.player == expected + queue[-1]
        await queues.cancel(seek(y + "2", y, 1500, queue=queue))
        await queues.cancel(seek(z, z, 1700, queue=queue))
    # Nobody else fits: the previous opponent after all.
    await queues.offer(seek("v", "v", 1500, now), now)
    assert (await queues.offer(seek("w", "w", 1500, now), now)).match.id == "v"
    await queues.offer(seek("v2", "v", 1500, now + 1), now + 1)
    assert (await queues.offer(seek("w2", "w", 1500, now + 2), now + 2)).match.id == "v2"
    # A pass prefers someone else too. v waits, then w (200 away) and u (200 the other way):
    # nobody fits at first; after a second v's window reaches both, and he gets u, although
    # w came first.
    await queues.offer(seek("v3", "v", 1500, now + 3), now + 3)
    await queues.offer(seek("w3", "w", 1700, now + 4), now + 4)
    await queues.offer(seek("u", "u", 1300, now + 5), now + 5)
    assert await queues.pair_waiting(now + 1_002) == []
    assert ids(await queues.pair_waiting(now + 1_003)) == [("v3", "u")]


async def test_a_pass_pairs_waiting_seekers_as_their_windows_widen(queues: Any) -> None:
    t0 = 1_000_000
    assert (await queues.offer(seek("hi", "ph", 2092, t0), t0)).match is None
    assert (await queues.offer(seek("lo", "pl", 1500, t0 + 1_000), t0 + 1_000)).match is None
    # 592 apart: the elder's window is 150 + 50 a second: 590 after 8.8 s, 600 after 9 s.
    assert await queues.pair_waiting(t0 + 8_800) == []
    assert ids(await queues.pair_waiting(t0 + 9_000)) == [("hi", "lo")]
    assert await queues.pair_waiting(t0 + 9_000) == []  # taken out of the queue
    # Anyone after 17 s.
    await queues.offer(seek("x", "px", 10, t0), t0)
    await queues.offer(seek("y", "py", 3000, t0), t0)
    assert await queues.pair_waiting(t0 + 16_999) == []
    assert ids(await queues.pair_waiting(t0 + 17_000)) == [("x", "y")]
    # The longest-waiting first: after 3 s x takes y (220 away, within his 300), although y
    # and z are as close; z is left.
    await queues.offer(seek("x2", "qx", 1500, t0), t0)
    await queues.offer(seek("y2", "qy", 1720, t0 + 1_000), t0 + 1_000)
    await queues.offer(seek("z2", "qz", 1940, t0 + 2_000), t0 + 2_000)
    assert ids(await queues.pair_waiting(t0 + 3_000)) == [("x2", "y2")]


async def test_a_no_show_is_barred_and_the_one_left_alone_goes_to_the_head(
        queues: Any) -> None:
    now = 100_000
    # pb was paired with pa and never sat; meanwhile he seeks again elsewhere.
    await queues.offer(seek("b2", "pb", 1500, now, queue="yukon:180:r"), now)
    dropped = await queues.no_show(R, ["pa"], ["pb"], now)
    assert [s.id for s in dropped] == ["b2"]
    barred = await queues.offer(seek("b3", "pb", 1500, now + 1_000), now + 1_000)
    assert barred.barred_ms == 59_000 and barred.match is None
    assert (await queues.offer(seek("c", "pc", 1500, now + 1_000), now + 1_000)).match is None
    await queues.cancel(seek("c", "pc", 1500))
    # pa seeks again: at the head, he counts as having waited 17 s: anyone fits him.
    back = await queues.offer(seek("a", "pa", 1500, now + 2_000), now + 2_000)
    assert back.seek.since == now + 2_000 - 17_000 and back.match is None
    far = await queues.offer(seek("d", "pd", 2900, now + 2_500), now + 2_500)
    assert far.match is not None and far.match.id == "a"
    again = await queues.offer(seek("a2", "pa", 1500, now + 3_000), now + 3_000)
    assert again.seek.since == now + 3_000  # once
    assert (await queues.offer(seek("b4", "pb", 1500, now + 60_000), now + 60_000)).match \
        is not None  # free again after a minute


async def test_a_seeker_given_back_waits_again_unless_he_seeks_anew(queues: Any) -> None:
    now = 100_000
    await queues.offer(seek("a", "pa", 1500, now), now)
    held = (await queues.offer(seek("b", "pb", 1500, now), now)).match
    assert held.id == "a"
    assert await queues.give_back(held)  # his race could not be made
    assert (await queues.offer(seek("c", "pc", 1500, now), now)).match.id == "a"
    await queues.offer(seek("d", "pd", 1500, now), now)
    taken = await queues.pair_waiting(now)
    assert taken == []
    held = (await queues.offer(seek("e", "pe", 1500, now), now)).match
    assert held.id == "d"
    await queues.offer(seek("d2", "pd", 1500, now, queue="yukon:180:r"), now)
    assert not await queues.give_back(held)  # one seek per player: d2 is his now
    assert (await queues.offer(seek("f", "pf", 1500, now), now)).match is None


async def test_a_seek_taken_over_by_another_connection_keeps_its_time(queues: Any) -> None:
    now = 100_000
    await queues.offer(seek("a", "pa", 1500, now - 9000), now)
    assert await queues.take_over("pa", C, "p2", 7, "a2") is None  # not in that queue
    assert await queues.take_over("pz", R, "p2", 7, "a2") is None  # no seek
    old, moved = await queues.take_over("pa", R, "p2", 7, "a2")
    assert (old.id, old.process, old.conn) == ("a", "p1", 1)
    assert (moved.id, moved.process, moved.conn, moved.since) == ("a2", "p2", 7, now - 9000)
    assert not await queues.cancel(seek("a", "pa", 1500, now - 9000))  # the old hold: none
    found = (await queues.offer(seek("b", "pb", 1500, now), now)).match
    assert (found.id, found.process, found.conn) == ("a2", "p2", 7)


async def test_a_seeker_held_by_a_dead_process_goes_back(redis: RedisServer) -> None:
    alive = await redis_queues(redis)
    await alive.client.delete(proc_key("p2", "alive"))
    dead = RedisQueues(alive.client, "p9")  # the pairing process, about to die: no alive key
    now = 100_000
    assert (await dead.offer(seek("a", "pa", 1500, now), now)).match is None
    await dead.offer(seek("x", "px", 9000, now, process="p2"), now)
    await dead.offer(seek("y", "py", 100, now, process="p1"), now)
    taken = await dead.offer(seek("b", "pb", 1500, now, process="p9"), now)
    assert taken.match is not None and taken.match.id == "a"
    assert ids(await dead.pair_waiting(now + 20_000)) == [("x", "y")]
    # p9 dies before it makes the races: after the timeout, someone else gives back those
    # whose own process runs (a, y; not x, whose process p2 is gone too).
    assert await alive.recover(now + 1_000) == 0  # not yet
    assert await alive.recover(now + 26_000) == 2
    again = await alive.offer(seek("c", "pc", 1500, now + 26_000), now + 26_000)
    assert again.match is not None and again.match.id == "a"
    assert ids(await alive.pair_waiting(now + 26_000)) == []  # y alone
    await alive.client.aclose()


# ------------------------------------------------------------------ the two in step
def script(seed: int, steps: int = 300) -> list[tuple[Any, ...]]:
    """Random operations on the queues: offers (12 players, 4 networks, 3 queues), cancels,
    passes and no-shows, at growing times."""
    rng = random.Random(seed)
    now = 1_000_000
    out: list[tuple[Any, ...]] = []
    for n in range(steps):
        now += rng.choice((0, 1, 250, 1_000, 3_000, 9_000))
        roll = rng.random()
        player = f"p{rng.randrange(12)}"
        if roll < 0.6:
            queue = rng.choice((R, R, C, "yukon:180:r"))
            rating = round(rng.gauss(1500, 350), 3)
            out.append(("offer", Seek(f"s{n:03d}{rng.randrange(1000):03d}", queue, player,
                                      player, rating, now, "p1", n,
                                      network=f"n{rng.randrange(4)}"), now))
        elif roll < 0.7:
            out.append(("cancel", player, now))
        elif roll < 0.95:
            out.append(("pass", now))
        else:
            out.append(("no_show", rng.choice((R, C)), [player], [f"p{rng.randrange(12)}"],
                        now))
    return out


async def play(queues: Any, steps: list[tuple[Any, ...]]) -> list[Any]:
    seeks: dict[str, Seek] = {}
    out: list[Any] = []
    for step in steps:
        if step[0] == "offer":
            got = await queues.offer(step[1], step[2])
            seeks[got.seek.player] = got.seek
            out.append(("offer", got.match and got.match.id, got.replaced and got.replaced.id,
                        got.full, got.barred_ms, got.seek.since, got.seek.last))
        elif step[0] == "cancel":
            mine = seeks.get(step[1])
            out.append(("cancel", mine is not None and await queues.cancel(mine)))
        elif step[0] == "pass":
            out.append(("pass", ids(await queues.pair_waiting(step[1]))))
        else:
            dropped = await queues.no_show(*step[1:])
            out.append(("no_show", [s.id for s in dropped]))
    return out


@pytest.mark.parametrize("seed", range(6))
async def test_memory_and_redis_pair_alike(redis: RedisServer, seed: int) -> None:
    steps = script(seed)
    memory = await play(LocalQueues(), steps)
    q = await redis_queues(redis)
    try:
        assert await play(q, steps) == memory
    finally:
        await q.client.aclose()
    made = [p for kind, *rest in memory if kind == "pass" for p in rest[0]]
    assert made and any(m[1] for m in memory if m[0] == "offer")  # both ways were tried


def test_a_pass_is_the_rule_applied_in_turn() -> None:
    """The pass's outward walk from each seeker's rating finds what looking at every seeker
    finds: the longest-waiting first, each with his best among those left."""
    from solrace.core.pairing import best

    rng = random.Random(7)
    for _ in range(300):
        now = 100_000
        line = [Seek(f"s{i}", R, f"p{rng.randrange(40)}",
                     "n", float(rng.choice((1400, 1500, 1500, 1600, 2100))),
                     now - rng.randrange(20_000), "p1", i, network=f"n{rng.randrange(3)}",
                     last=f"p{rng.randrange(40)}") for i in range(rng.randrange(2, 14))]
        left = sorted({s.player: s for s in line}.values(), key=lambda s: (s.since, s.id))
        expected = []
        while left:
            first = left.pop(0)
            match = best(first, left, now)
            if match is not None:
                left.remove(match)
                expected.append((first.id, match.id))
        assert ids(pairs({s.player: s for s in line}.values(), now)) == expected


async def test_the_scripts_run_on_a_redis_cluster(tmp_path: Path) -> None:
    """On a Redis Cluster every key of the queues is in the slot of ``{q}``: the scripts,
    which work out some keys themselves (a player's, his previous seek's queue), run there
    as on one server, to the same pairs."""
    nodes = make_cluster(tmp_path / "cluster")
    try:
        client = connect(f"redis+cluster://127.0.0.1:{nodes[0].port}")
        await client.set(proc_key("p1", "alive"), "1")
        steps = script(3)
        assert await play(RedisQueues(client, "p1"), steps) == await play(LocalQueues(), steps)
        await client.aclose()
    finally:
        for node in nodes:
            node.stop()
