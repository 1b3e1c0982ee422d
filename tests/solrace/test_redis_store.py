"""The Redis store's commits on its link (solrace.store.redis_store) against a real
``redis-server``: when a batch is written, and what a batch written on a dead link becomes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.runtime.redis_connect import connect, key, unit_of
from solrace.store.redis_store import RedisStore

from tests.solrace.conftest import until


def _race(race_id: str) -> Race:
    return Race(race_id, "scotch", 11, "salt", Options(players=2), 0, "host")


class Stored:
    """A started store on the test's Redis, and a plain client to read Redis behind it."""

    def __init__(self, store: RedisStore, sync: redis.Redis) -> None:
        self.store, self.sync = store, sync

    async def race(self, race_id: str) -> Race:
        """A new race, stored (its first commit opens the store's link)."""
        race = _race(race_id)
        self.store.add_race(race)
        await self.store.flushed()
        return race


@pytest.fixture
async def stored(redis: Any) -> AsyncIterator[Stored]:
    store = RedisStore(connect(redis.url), "p1")
    await store.start()
    sync = redis_sync(redis.port)
    try:
        yield Stored(store, sync)
    finally:
        store.close()
        await store.client.aclose()
        sync.close()


def _log_len(sync: redis.Redis, race_id: str) -> int:
    return int(sync.llen(key(unit_of(race_id), f"log:{race_id}")))


async def test_a_batch_is_written_when_its_turn_ends(stored: Stored) -> None:
    """The batch a loop turn queued is on the link by the end of that turn, before any task
    runs (here none can: the loop is held right after the turn), and acknowledged after."""
    store, sync = stored.store, stored.sync
    race = await stored.race("rw1")
    assert store.link is not None and store.link.open
    store.append(race.join("Ann", "tok-a", 0).log)
    acked: list[str] = []
    store.after_commit(lambda: acked.append("ok"), lambda exc: acked.append(repr(exc)))
    await asyncio.sleep(0)  # this turn ends: the store's end-of-turn callback runs next
    time.sleep(0.2)  # the loop is held: no task has read Redis's answer
    assert acked == []
    assert _log_len(sync, "rw1") == 1  # yet the commit is in Redis
    await store.flushed()
    assert acked == ["ok"]


async def test_send_now_writes_at_once_unless_a_batch_is_in_flight(stored: Stored) -> None:
    """``send_now`` (the hub calls it before building a mover's reply) writes the batch within
    the call when nothing is in flight; with a batch in flight it does nothing, and what was
    queued goes after it, in order."""
    store, sync = stored.store, stored.sync
    race = await stored.race("rw4")
    acked: list[str] = []
    store.append(race.join("Ann", "tok-a", 0).log)
    store.after_commit(lambda: acked.append("Ann"))
    store.send_now()
    time.sleep(0.2)  # not one loop turn: not even this turn's end
    assert _log_len(sync, "rw4") == 1 and acked == []
    store.append(race.join("Bob", "tok-b", 0).log)
    store.after_commit(lambda: acked.append("Bob"))
    store.send_now()  # Ann's batch is in flight: Bob's waits for it
    time.sleep(0.2)
    assert _log_len(sync, "rw4") == 1
    await store.flushed()
    assert acked == ["Ann", "Bob"] and _log_len(sync, "rw4") == 2


async def test_a_batch_that_cannot_be_encoded_fails_and_the_next_goes(stored: Stored) -> None:
    """A batch holding what RESP cannot carry (a bug) fails its callbacks, instead of
    leaving them waiting; the store goes on with the next batch."""
    store, sync = stored.store, stored.sync
    race = await stored.race("rw5")
    outcome: list[str] = []
    store.publish("rw5", None)  # type: ignore[arg-type]
    store.after_commit(lambda: outcome.append("ok"),
                       lambda exc: outcome.append(type(exc).__name__))
    await until(lambda: outcome)
    assert outcome == ["TypeError"]
    assert await store.probe()
    store.append(race.join("Ann", "tok-a", 0).log)
    store.after_commit(lambda: outcome.append("ok"))
    await store.flushed()
    assert outcome == ["TypeError", "ok"] and _log_len(sync, "rw5") == 1


async def test_a_batch_sent_on_a_link_redis_dropped_fails_and_is_not_seen(stored: Stored) -> None:
    """Redis dropped the link before the process noticed: the batch goes out on it at the end
    of its turn, fails (its callbacks fail; nothing of it is in Redis), and the next commit
    opens a new link."""
    store, sync = stored.store, stored.sync
    race = await stored.race("rw2")
    assert store.link is not None and store.link._writer is not None
    host, port = store.link._writer.get_extra_info("sockname")[:2]
    sync.execute_command("CLIENT", "KILL", "ADDR", f"{host}:{port}")  # the loop is busy
    assert store.link.open  # not noticed yet
    store.append(race.join("Ann", "tok-a", 0).log)
    outcome: list[str] = []
    store.after_commit(lambda: outcome.append("ok"),
                       lambda exc: outcome.append(type(exc).__name__))
    await until(lambda: outcome)
    assert outcome == ["ConnectionError"]
    assert _log_len(sync, "rw2") == 0
    other = _race("rw3")
    store.add_race(other)
    store.append(other.join("Bob", "tok-b", 0).log)
    store.after_commit(lambda: outcome.append("ok"))
    await store.flushed()
    assert outcome == ["ConnectionError", "ok"]
    assert _log_len(sync, "rw3") == 1
    assert store.link.opened == 2


def redis_sync(port: int) -> redis.Redis:
    return redis.Redis(port=port)

