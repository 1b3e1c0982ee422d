"""The store's commit link (solrace.store.redis_wire) against a real ``redis-server``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from solrace.runtime.redis_connect import connect
from solrace.store.redis_wire import CommitLink, pack


def test_packs_as_redis_py_does() -> None:
    commands: list[list[Any]] = [
        ["EVALSHA", "ab" * 20, 3, "k:{u}", b"\x00\xff bytes", "nöt ascii", -7, 1.5, 10**15],
        ["SADD", "set", ""],
    ]
    ours = pack(commands)
    theirs = b"".join(Connection().pack_commands(commands))
    assert ours == theirs
    with pytest.raises(TypeError):
        pack([["SET", "k", None]])
    with pytest.raises(TypeError):
        pack([["SET", "k", True]])  # redis-py refuses booleans too


async def test_replies_in_order_with_errors_in_place(redis: Any) -> None:
    link = CommitLink(port=redis.port)
    try:
        replies = await link.call([["SET", "a", "text"], ["INCR", "a"], ["GET", "a"],
                                   ["RPUSH", "l", b"x", b"y"],
                                   ["EVALSHA", "0" * 40, 0]])
        assert replies[0] == b"OK"
        assert isinstance(replies[1], ResponseError) and "not an integer" in str(replies[1])
        assert replies[2] == b"text"
        assert replies[3] == 2
        assert isinstance(replies[4], NoScriptError)
        # An error reply is not a failure of the link: it stays open.
        assert await link.call([["LRANGE", "l", 0, -1]]) == [[b"x", b"y"]]
        assert link.opened == 1
    finally:
        link.close()


async def test_opens_again_after_the_server_dropped_it(redis: Any) -> None:
    link = CommitLink(port=redis.port)
    admin = aioredis.Redis(port=redis.port)
    try:
        [me] = await link.call([["CLIENT", "ID"]])
        await admin.execute_command("CLIENT", "KILL", "ID", me)
        with pytest.raises(RedisConnectionError):
            await link.call([["PING"]])
        assert await link.call([["PING"]]) == [b"PONG"]
        assert link.opened == 2
    finally:
        link.close()
        await admin.aclose()


async def test_a_silent_server_times_out_and_the_link_closes() -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def mute(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        accepted.append(w)  # reads nothing, answers nothing

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    link = CommitLink(port=port, timeout=0.3)
    try:
        began = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await link.call([["PING"]])
        assert 0.25 < time.monotonic() - began < 2.0
        assert link._writer is None  # closed: what it would read next belongs to no one
    finally:
        link.close()
        for w in accepted:
            w.close()
        server.close()
        await server.wait_closed()


async def test_a_cancelled_call_leaves_no_stale_reply(redis: Any) -> None:
    link = CommitLink(port=redis.port)
    try:
        # The reply to this call comes after the cancel: the next call must not read it.
        task = asyncio.create_task(link.call([["BLPOP", "never", "0.2"]]))
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.3)
        assert await link.call([["ECHO", "mine"]]) == [b"mine"]
        assert link.opened == 2
    finally:
        link.close()


async def test_speaks_to_the_server_of_the_store_client(redis: Any) -> None:
    """``CommitLink.of`` takes the address, database and password of the store's client."""
    admin = aioredis.Redis(port=redis.port)
    await admin.config_set("requirepass", "s3cret")
    await admin.aclose()
    client = connect(f"redis://:s3cret@127.0.0.1:{redis.port}/3", retries=0)
    link = CommitLink.of(client, 2.0)
    assert link is not None
    try:
        assert await link.call([["SET", "where", "db3"]]) == [b"OK"]
        assert await client.get("where") == b"db3"
        wrong = CommitLink(port=redis.port, password="wrong")
        with pytest.raises(RedisConnectionError):
            await wrong.call([["PING"]])
    finally:
        link.close()
        await client.aclose()


async def test_garbage_from_the_server_is_a_failed_link() -> None:
    """What is not RESP fails the link with redis-py's ConnectionError (the store catches
    RedisError), never another exception that would leave a commit unanswered."""

    async def babble(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await r.read(100)
        w.write(b"?this is not RESP\r\n")
        await w.drain()

    server = await asyncio.start_server(babble, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    link = CommitLink(port=port)
    try:
        with pytest.raises(RedisConnectionError):
            await link.call([["PING"]])
        assert link._writer is None
    finally:
        link.close()
        server.close()
        await server.wait_closed()
