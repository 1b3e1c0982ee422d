"""The Redis client of every process (solrace.runtime.redis_connect), on a real Redis: a burst of
commands beyond its pool's connections waits for one instead of failing."""

from __future__ import annotations

import asyncio
from typing import Any

from solrace.runtime.redis_connect import connect


async def test_a_burst_beyond_the_pool_waits_for_a_connection(redis: Any) -> None:
    client = connect(redis.url, connections=8)
    try:
        # Each holds a connection for 0.2 s: 24 at once need three rounds of the 8.
        got = await asyncio.gather(*(client.blpop([f"nothing:{i}"], timeout=0.2)
                                     for i in range(24)))
        assert got == [None] * 24
    finally:
        await client.aclose()
