"""The bus's subscriber link read in the event loop's own callback: RESP read with hiredis.

With redis-py's ``PubSub`` a message reaches the bus through a task awaiting ``get_message()``:
the task wakes one loop turn after the bytes came, then redis-py's parsing and its message dict.
Across processes that is on the path of every move to every spectator of another process, so
this link hands each message to the bus from the transport's ``data_received`` itself: the
spectators' process had a move 0.1 ms after the owner had its commit's answer, now before it
(docs/performance.md, "Crowds and across processes").

It speaks only what the bus needs of a subscriber connection: ``AUTH`` once opened,
``SSUBSCRIBE``/``SUNSUBSCRIBE`` (their confirmations go to ``on_confirmed``), ``PING`` and the
``smessage`` pushes. A subscription connection has no database, so ``SELECT`` is not sent. A
reply nobody waits for that is an error (a ``MOVED`` for a channel of another cluster node,
say) closes the link, as redis-py's reader would fail: the bus's link opens it again with
backoff and catches up from the streams. A TLS link keeps redis-py (:meth:`Listener.open`
returns None for it).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import Any, cast

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from solrace.store.redis_wire import pack

log = logging.getLogger(__name__)

OnMessage = Callable[[str, bytes], None]


class Listener(asyncio.Protocol):
    """One subscriber connection. ``on_message(channel, data)`` runs for each published
    message, in order, synchronously in ``data_received``; ``on_confirmed(channel)`` for each
    subscription Redis confirmed. ``closed`` is done once the connection is gone."""

    def __init__(self, on_message: OnMessage, on_confirmed: Callable[[str], None]) -> None:
        self.on_message = on_message
        self.on_confirmed = on_confirmed
        self.parser: Any = hiredis.Reader()
        self.transport: asyncio.Transport | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        #: Commands that wait for their reply (AUTH, PING), oldest first.
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()

    @classmethod
    async def open(cls, client: Redis, on_message: OnMessage,
                   on_confirmed: Callable[[str], None], timeout: float) -> Listener | None:
        """A listener connected (and authenticated) to the server of ``client``, with its
        address and credentials; None when its connections are of a kind this link does not
        speak (TLS). Raises redis-py's ``ConnectionError`` when it cannot be opened."""
        pool = client.connection_pool
        kwargs = pool.connection_kwargs
        loop = asyncio.get_running_loop()
        listener = cls(on_message, on_confirmed)
        try:
            async with asyncio.timeout(timeout):
                if pool.connection_class is UnixDomainSocketConnection:
                    await loop.create_unix_connection(lambda: listener, kwargs["path"])
                elif pool.connection_class is Connection:
                    await loop.create_connection(lambda: listener,
                                                 kwargs.get("host") or "127.0.0.1",
                                                 int(kwargs.get("port") or 6379))
                else:
                    return None
                password = kwargs.get("password")
                if password is not None:
                    username = kwargs.get("username")
                    reply = await listener.call(["AUTH", *([username] if username else []),
                                                 password])
                    if isinstance(reply, ResponseError):
                        raise RedisConnectionError(f"Redis refused the link: {reply}")
        except (OSError, TimeoutError) as exc:
            listener.close()
            raise RedisConnectionError(f"Redis subscription link failed: {exc!r}") from exc
        except BaseException:
            listener.close()
            raise
        return listener

    # ----------------------------------------------------------- commands
    def send(self, *command: Any) -> None:
        """Write one command (dropped once the link is closing: it is opened again)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(pack([command]))

    async def call(self, command: list[Any]) -> Any:
        """Send a command that has a reply and wait for it (an error reply is returned as
        ``ResponseError``)."""
        if self.transport is None or self.transport.is_closing():
            raise RedisConnectionError("the subscription link is closed")
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        self.send(*command)
        return await fut

    async def ssubscribe(self, *channels: str) -> None:
        self.send("SSUBSCRIBE", *channels)

    async def sunsubscribe(self, *channels: str) -> None:
        self.send("SUNSUBSCRIBE", *channels)

    async def ping(self, timeout: float = 2.0) -> None:
        await asyncio.wait_for(self.call(["PING"]), timeout)

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    # ----------------------------------------------------------- protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        try:
            parser.feed(data)
            while (reply := parser.gets()) is not False:
                self._reply(reply)
        except hiredis.ProtocolError:
            log.warning("Redis subscription link: not RESP, closing it")
            self.close()

    def _reply(self, reply: Any) -> None:
        if type(reply) is list and reply and type(reply[0]) is bytes:
            kind = reply[0]
            if kind == b"smessage" or kind == b"message":
                try:
                    self.on_message(reply[1].decode(), reply[2])
                except Exception:
                    log.exception("a message of the subscription link failed")
                return
            if kind == b"ssubscribe" or kind == b"subscribe":
                self.on_confirmed(reply[1].decode())
                return
            if kind == b"sunsubscribe" or kind == b"unsubscribe":
                return
            if kind == b"pong":
                self._answer(reply)
                return
        if isinstance(reply, hiredis.ReplyError):
            if self.waiting:
                self._answer(ResponseError(str(reply)))
                return
            log.warning("Redis subscription link: %s, opening it again", reply)
            self.close()
            return
        self._answer(reply)

    def _answer(self, reply: Any) -> None:
        if self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        for fut in self.waiting:
            if not fut.done():
                fut.set_exception(RedisConnectionError("the subscription link was lost"))
        self.waiting.clear()
        if not self.closed.done():
            self.closed.set_result(None)
