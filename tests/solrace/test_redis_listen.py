"""The bus's subscriber link (solrace.bus.redis_listen) against a real ``redis-server``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from solrace.bus.redis_bus import RedisBus
from solrace.bus.redis_listen import Listener
from solrace.runtime.redis_connect import connect

from tests.solrace.conftest import until


class Heard:
    """What a listener handed on, and when (inside which call)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.confirmed: list[str] = []
        self.in_callback: list[bool] = []

    def message(self, channel: str, data: bytes) -> None:
        # Handed on from the transport's callback: no task runs it.
        self.in_callback.append(asyncio.current_task() is None)
        self.messages.append((channel, data))

    def confirm(self, channel: str) -> None:
        self.confirmed.append(channel)


async def test_messages_are_handed_on_in_order_from_the_callback(redis: Any) -> None:
    client = connect(f"redis://127.0.0.1:{redis.port}/0", retries=0)
    heard = Heard()
    listener = await Listener.open(client, heard.message, heard.confirm, 2.0)
    assert listener is not None
    try:
        await listener.ping()  # not subscribed yet: a plain PONG
        await listener.ssubscribe("sr:{u1}:ev", "sr:{u2}:ev")
        await until(lambda: len(heard.confirmed) == 2)
        assert sorted(heard.confirmed) == ["sr:{u1}:ev", "sr:{u2}:ev"]
        await listener.ping()  # subscribed: the ["pong", ""] push
        payloads = [bytes([i % 256]) * (1 + i * 97 % 5000) for i in range(200)]
        pipe = client.pipeline(transaction=False)
        for i, data in enumerate(payloads):
            pipe.execute_command("SPUBLISH", f"sr:{{u{1 + i % 2}}}:ev", data)
        await pipe.execute()
        await until(lambda: len(heard.messages) == len(payloads))
        assert heard.messages == [(f"sr:{{u{1 + i % 2}}}:ev", data)
                                  for i, data in enumerate(payloads)]
        assert all(heard.in_callback)
        await listener.sunsubscribe("sr:{u2}:ev")
        await listener.ping()  # the unsubscription is done before its answer
        await client.execute_command("SPUBLISH", "sr:{u2}:ev", b"gone")
        await client.execute_command("SPUBLISH", "sr:{u1}:ev", b"kept")
        await until(lambda: len(heard.messages) == len(payloads) + 1)
        await asyncio.sleep(0.05)
        assert heard.messages[len(payloads):] == [("sr:{u1}:ev", b"kept")]
    finally:
        listener.close()
        await client.aclose()


async def test_a_failing_handler_does_not_end_the_link(redis: Any) -> None:
    client = connect(f"redis://127.0.0.1:{redis.port}/0", retries=0)
    got: list[bytes] = []

    def handler(channel: str, data: bytes) -> None:
        if data == b"bad":
            raise ValueError("a bug in a handler")
        got.append(data)

    listener = await Listener.open(client, handler, lambda c: None, 2.0)
    assert listener is not None
    try:
        await listener.ssubscribe("ch")
        await listener.ping()
        for data in (b"one", b"bad", b"two"):
            await client.execute_command("SPUBLISH", "ch", data)
        await until(lambda: len(got) == 2)
        assert got == [b"one", b"two"] and not listener.closed.done()
    finally:
        listener.close()
        await client.aclose()


async def test_an_error_nobody_waits_for_closes_the_link(redis: Any) -> None:
    """A reply the bus did not ask for (a MOVED, say) is a failed link: the bus opens it again
    and catches up, as when redis-py's reader fails."""
    client = connect(f"redis://127.0.0.1:{redis.port}/0", retries=0)
    listener = await Listener.open(client, lambda c, d: None, lambda c: None, 2.0)
    assert listener is not None
    try:
        listener.send("SSUBSCRIBE")  # no channel: an error reply
        await asyncio.wait_for(listener.closed, 2.0)
        with pytest.raises(RedisConnectionError):
            await listener.ping()
    finally:
        listener.close()
        await client.aclose()


async def test_password_and_refusal(redis: Any) -> None:
    admin = aioredis.Redis(port=redis.port)
    await admin.config_set("requirepass", "s3cret")
    await admin.aclose()
    client = connect(f"redis://:s3cret@127.0.0.1:{redis.port}/3", retries=0)
    wrong = connect(f"redis://:wrong@127.0.0.1:{redis.port}/0", retries=0)
    heard = Heard()
    listener = await Listener.open(client, heard.message, heard.confirm, 2.0)
    assert listener is not None
    try:
        await listener.ssubscribe("ch")
        await until(lambda: heard.confirmed == ["ch"])
        # Pub/sub has no databases: a publisher on database 0 reaches it.
        await client.execute_command("SPUBLISH", "ch", b"hi")
        await until(lambda: heard.messages == [("ch", b"hi")])
        with pytest.raises(RedisConnectionError):
            await Listener.open(wrong, heard.message, heard.confirm, 2.0)
    finally:
        listener.close()
        await client.aclose()
        await wrong.aclose()


async def test_garbage_from_the_server_closes_the_link() -> None:
    async def babble(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await r.read(100)
        w.write(b"?this is not RESP\r\n")
        await w.drain()
        await asyncio.sleep(1)

    server = await asyncio.start_server(babble, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = connect(f"redis://127.0.0.1:{port}/0", retries=0)
    listener = await Listener.open(client, lambda c, d: None, lambda c: None, 2.0)
    assert listener is not None
    try:
        with pytest.raises(RedisConnectionError):
            await listener.ping()
        assert listener.closed.done()
    finally:
        listener.close()
        server.close()
        await server.wait_closed()
        await client.aclose()


async def test_the_bus_link_comes_back_after_redis_dropped_it(redis: Any) -> None:
    """Redis drops the bus's subscriber link: it is opened again, subscribed again, and
    messages published afterwards reach the bus."""
    client = connect(f"redis://127.0.0.1:{redis.port}/0", retries=0)
    bus = RedisBus(client, "p-test")
    got: list[tuple[str, bytes]] = []
    bus.received = lambda channel, data: got.append((channel, data))  # type: ignore[method-assign]
    admin = aioredis.Redis(port=redis.port)
    try:
        await bus.start()
        [link] = bus._links.values()
        first = link.pubsub
        assert isinstance(first, Listener)
        await admin.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        await until(lambda: first.closed.done(), 5.0)
        await until(lambda: link.pubsub is not first and link.ready.is_set(), 5.0)
        assert isinstance(link.pubsub, Listener)
        await until(lambda: all(c.is_set() for c in link.confirmed.values()), 5.0)
        channel = next(iter(link.channels))
        await admin.execute_command("SPUBLISH", channel, b"after")
        await until(lambda: got == [(channel, b"after")], 5.0)
    finally:
        await bus.close()
        await admin.aclose()
