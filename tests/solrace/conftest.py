"""Fixtures: a real server on port 0 (in this event loop) and connected clients."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from solrace import settings
from solrace.net.app import App
from solrace.store.sqlite_store import SQLiteStore as Storage
from solrace.tools.race_client import RaceClient

#: Every wait in these tests is a small multiple of this (seconds).
T = 5.0


async def until(check: Any, seconds: float = 2.0) -> None:
    """Wait until ``check()`` is true, looking every 10 ms; AssertionError after ``seconds``."""
    for _ in range(int(seconds / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within the time")


@pytest.fixture(autouse=True)
def builder_at_full_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    """The apps a test makes build replays at niceness 0: at the default 10, beside the suite's
    other processes and `make test-under-load`'s burner, a long race's replay took longer than
    the server's 30 s for an HTTP answer."""
    monkeypatch.setattr(settings, "BUILDER_NICE", 0)


class Server:
    def __init__(self, app: App, url: str, http: str) -> None:
        self.app = app
        self.url = url
        self.http = http
        self.clients: list[RaceClient] = []

    async def client(self, **kwargs: Any) -> RaceClient:
        client = await RaceClient.connect(self.url, **kwargs)
        self.clients.append(client)
        return client


@contextlib.asynccontextmanager
async def serving(app: App) -> AsyncIterator[Server]:
    """``app`` on a free port of the loopback for the block; its clients closed after."""
    async with app.serve("127.0.0.1", 0) as ws_server:
        port = next(iter(ws_server.sockets)).getsockname()[1]
        srv = Server(app, f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}")
        yield srv
        for client in srv.clients:
            await client.close()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    storage = Storage(tmp_path / "race.db")
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "index.html").write_text("<!doctype html><title>solrace</title>")
    (client_dir / "app.js").write_text("export {};")
    app = App(storage, countdown=0.05, rate_limit=0, client=client_dir)
    async with serving(app) as srv:
        yield srv
    app.close()
    storage.close()


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Any]:
    """A ``redis-server`` of the test's own (tests/solrace/servers.py); a test file may keep
    one for all its tests instead (a fixture of the same name there)."""
    from .servers import RedisServer

    server = RedisServer(tmp_path / "redis")
    yield server
    server.stop()


@pytest.fixture
async def pair(redis: Any) -> AsyncIterator[tuple[Any, Any]]:
    """Two ``solrace serve`` processes on ``redis``, trusting ``X-Forwarded-For`` (each test
    browser picks its network)."""
    from .servers import Solrace

    a = await Solrace(redis.url, "--trust-proxy").start()
    b = await Solrace(redis.url, "--trust-proxy").start()
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()
