"""The password pool (solrace.service.hashing) with real threads: jobs in turn by address, what
may wait bounded per address and in all, a cancelled caller's job taken out of the queue."""

from __future__ import annotations

import asyncio
import threading

import pytest
from solrace.core.sign_in import Throttled
from solrace.service.hashing import PasswordPool

from .conftest import T


async def test_addresses_take_turns_and_waiting_is_bounded() -> None:
    pool = PasswordPool(threads=1, per_address=3, limit=6, rate=0)
    gate = threading.Event()
    ran: list[str] = []

    def work(tag: str) -> str:
        ran.append(tag)
        return tag

    blocker = asyncio.create_task(pool.run("x", lambda: gate.wait(T) and "x"))
    await asyncio.sleep(0)
    jobs = [asyncio.create_task(pool.run(address, lambda tag=f"{address}{i}": work(tag)))
            for address, n in (("a", 3), ("b", 1), ("c", 2)) for i in range(n)]
    await asyncio.sleep(0)
    assert pool.waiting == 6 and pool.running == 1
    with pytest.raises(Throttled):  # a's fourth: three wait already
        await pool.run("a", lambda: "a3")
    with pytest.raises(Throttled):  # six wait in all
        await pool.run("d", lambda: "d0")
    gate.set()
    assert await blocker == "x"
    assert sorted(await asyncio.gather(*jobs)) == ["a0", "a1", "a2", "b0", "c0", "c1"]
    # One job per address in turn, not a's three first.
    assert ran == ["a0", "b0", "c0", "a1", "c1", "a2"]
    assert [waited for _, waited in pool.history] == [0, 0, 1, 2, 3, 4, 5]
    pool.close()


async def test_a_cancelled_caller_leaves_the_queue_and_errors_come_back() -> None:
    pool = PasswordPool(threads=1, rate=0)
    gate = threading.Event()
    blocker = asyncio.create_task(pool.run("x", lambda: gate.wait(T)))
    waiting = asyncio.create_task(pool.run("a", lambda: "never"))
    await asyncio.sleep(0)
    assert pool.waiting == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert pool.waiting == 0 and not pool.queues
    gate.set()
    assert await blocker is True

    def broken() -> None:
        raise ValueError("bad record")

    with pytest.raises(ValueError, match="bad record"):
        await pool.run("a", broken)
    assert pool.running == 0 and pool.started == 2  # the cancelled job never ran
    pool.close()


async def test_an_address_asking_too_often_is_told_when_to_come_back() -> None:
    now = [0.0]
    pool = PasswordPool(threads=1, rate=0.5, burst=2, clock=lambda: now[0])
    assert await pool.run("a", lambda: 1) == 1
    assert await pool.run("a", lambda: 2) == 2
    with pytest.raises(Throttled) as err:
        await pool.run("a", lambda: 3)
    assert err.value.retry_after == 2
    assert await pool.run("b", lambda: 4) == 4  # another address: its own budget
    now[0] += 2.0
    assert await pool.run("a", lambda: 5) == 5
    pool.close()
