"""The connection's output path without a network: the bounded queue and the slow client."""

from __future__ import annotations

import asyncio

from solrace.net.connection import Connection, Output, RateLimiter
from solrace.runtime.supervisor import Supervisor
from solrace.settings import OUT_QUEUE


class FullTransport:
    def get_write_buffer_size(self) -> int:
        return 1 << 22  # the client stopped reading: the kernel and the buffer are full


class FakeWs:
    transport = FullTransport()
    remote_address = ("127.0.0.1", 1)
    request = None

    async def close(self, code: int, reason: str) -> None:
        pass


def test_slow_client_is_dropped_not_buffered() -> None:
    async def scenario() -> None:
        supervisor = Supervisor()
        conn = Connection(None, Output(), FakeWs(), 0.0, supervisor)  # type: ignore[arg-type]
        for i in range(OUT_QUEUE + 10):
            conn.send({"type": "x", "i": i})
        assert conn.queue.qsize() == OUT_QUEUE and conn.closing
        assert supervisor.running() == [f"close connection {conn.id}"]  # one close, however
        conn.send({"type": "late"})                                      # many overflows
        assert conn.queue.qsize() == OUT_QUEUE  # nothing more is queued once closing
        await asyncio.sleep(0)  # the close runs
        await supervisor.close()

    asyncio.run(scenario())


def test_rate_limiter_limits_then_floods() -> None:
    now = [0.0]
    limiter = RateLimiter(5, clock=lambda: now[0])
    verdicts = [limiter.check() for _ in range(30)]
    assert verdicts[:10] == ["ok"] * 10
    assert verdicts[10:20] == ["limited"] * 10
    assert verdicts[20:] == ["flood"] * 10
    now[0] += 100  # a quiet client earns its burst back
    assert limiter.check() == "ok"
