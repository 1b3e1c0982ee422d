"""The open challenges, in memory (one process) and in Redis (shared by several processes), held
to one contract: taken once, listed for their two players, dropped a minute after their end,
and every bound of solrace.core.challenge (per challenger, per challenged player, per network
with its share and the reserve, in all)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from solrace.cluster.challenges import RedisBook
from solrace.core.challenge import KEPT_AFTER_MS, Challenge
from solrace.core.race_parts import RaceError
from solrace.runtime.redis_connect import connect
from solrace.service.challenges import LocalBook
from solrace.settings import (
    CHALLENGES_PER_ADDRESS,
    CHALLENGES_PER_PLAYER,
    CHALLENGES_TO_PLAYER,
)

from .servers import RedisServer

NOW = 1_800_000_000_000


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
async def book(request: pytest.FixtureRequest, redis: RedisServer) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield LocalBook()
        return
    client = connect(redis.url)
    await client.flushdb()
    yield RedisBook(client)
    await client.aclose()


def ch(cid: str, by: str = "pa", to: str = "", network: str = "net-a", ends: int = 60_000,
       at: int = NOW) -> Challenge:
    return Challenge(cid, by, by.upper(), "scotch", 300, True, at, at + ends,
                     network=network, to=to, to_name=to.upper())


async def limit(book: Any, c: Challenge) -> str:
    with pytest.raises(RaceError) as err:
        await book.open(c, NOW)
    assert err.value.code == "limit_reached"
    return err.value.message


async def test_a_challenge_is_taken_once_and_listed_for_both(book: Any) -> None:
    await book.open(ch("c1", to="pb"), NOW)
    await book.open(ch("c2", at=NOW + 1), NOW + 1)
    assert (await book.get("c1", NOW)).to == "pb"
    incoming, outgoing = await book.of("pb", NOW)
    assert [c.id for c in incoming] == ["c1"] and outgoing == []
    incoming, outgoing = await book.of("pa", NOW)
    assert incoming == [] and [c.id for c in outgoing] == ["c1", "c2"]
    assert (await book.take("c1")).id == "c1"
    assert await book.take("c1") is None  # once
    assert await book.get("c1", NOW) is None
    assert [c.id for c in (await book.of("pa", NOW))[1]] == ["c2"]


async def test_an_ended_challenge_is_not_open_but_kept_for_its_timer(book: Any) -> None:
    await book.open(ch("c1", to="pb", ends=1000), NOW)
    assert await book.get("c1", NOW + 1000) is None  # its end came
    assert (await book.of("pb", NOW + 1000))[0] == []
    assert (await book.take("c1")).id == "c1"  # the timer that fires late still gets it
    await book.open(ch("c2", ends=1000), NOW)
    # A minute after its end it is dropped, and counts no more.
    for i in range(CHALLENGES_PER_PLAYER):
        await book.open(ch(f"d{i}", ends=1000, at=NOW + 1000 + KEPT_AFTER_MS), NOW + 1000 +
                        KEPT_AFTER_MS)


async def test_the_bounds(book: Any) -> None:
    for i in range(CHALLENGES_PER_PLAYER):
        await book.open(ch(f"a{i}"), NOW)
    assert "challenges open" in await limit(book, ch("a9"))
    for i in range(CHALLENGES_TO_PLAYER):  # one player's screen
        await book.open(ch(f"t{i}", by=f"fan{i}", to="star", network=f"net-{i}"), NOW)
    assert "waiting for him" in await limit(book, ch("t99", by="late", to="star",
                                                     network="net-late"))
    # One network's share, whoever its players.
    for i in range(CHALLENGES_PER_ADDRESS):
        await book.open(ch(f"n{i}", by=f"p{i}", network="cafe"), NOW)
    assert "its share" in await limit(book, ch("n99", by="p99", network="cafe"))
    # Given back after a failed race: held again whatever the counts.
    await book.open(ch("a9"), NOW, check=False)
    assert (await book.get("a9", NOW)) is not None
