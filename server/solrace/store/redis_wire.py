"""The store's commit link: one Redis connection of its own, RESP written and read directly.

Every move is a commit, and at a person's pace each commit is its own round trip. Through
redis-py's pipeline a one-script commit cost 67 µs of CPU and 79 µs of round trip here;
written as ready RESP bytes on a connection of its own and read with hiredis, 24 µs and 35 µs
(docs/performance.md, "Crowds and across processes"). The commits are the only commands of
this link, one batch at a time (the store keeps at most one in flight), so it needs no pool, no
lock and no retry: a command that timed out may still run once Redis answers (the store makes
its commits idempotent and decides itself what to do after a failure, as it did with a client
of ``retries=0``).

A failure of the link (refused, reset, timed out, cancelled half-way) closes it and raises
redis-py's ``ConnectionError`` or ``TimeoutError`` (both ``RedisError``); the next call opens a
new one. An error reply is not a failure of the link: it comes back in its command's place as
redis-py's ``ResponseError`` (``NoScriptError`` for ``NOSCRIPT``), as a pipeline run with
``raise_on_error=False`` gives it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

#: Bytes read at once from the socket.
_CHUNK = 1 << 16


def pack(commands: Sequence[Sequence[Any]]) -> bytes:
    """``commands`` as RESP arrays of bulk strings: bytes as they are, str in UTF-8, int and
    float in decimal (as redis-py encodes them)."""
    out: list[bytes] = []
    for args in commands:
        out.append(b"*%d\r\n" % len(args))
        for arg in args:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
                data = repr(arg).encode()
            else:
                raise TypeError(f"cannot send {type(arg).__name__} to Redis")
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _error(message: str) -> ResponseError:
    return NoScriptError(message) if message.startswith("NOSCRIPT") else ResponseError(message)


class CommitLink:
    """A connection to one Redis server (``host``/``port`` or a Unix ``path``), opened on first
    use, that sends batches of commands and returns their replies (see the module docstring).
    ``timeout`` bounds opening it and each batch's round trip."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 6379, path: str | None = None,
                 db: int = 0, username: str | None = None, password: str | None = None,
                 timeout: float = 2.0) -> None:
        self.host, self.port, self.path = host, port, path
        self.db, self.username, self.password = db, username, password
        self.timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._parser: Any = None
        #: Links opened so far (a new one after each failure).
        self.opened = 0

    @classmethod
    def of(cls, client: Redis, timeout: float) -> CommitLink | None:
        """A link to the server of ``client``, with its address and credentials; None when its
        connections are of a kind this link does not speak (TLS): the caller keeps redis-py."""
        pool = client.connection_pool
        kwargs = pool.connection_kwargs
        if pool.connection_class is UnixDomainSocketConnection:
            return cls(path=kwargs["path"], db=int(kwargs.get("db") or 0),
                       username=kwargs.get("username"), password=kwargs.get("password"),
                       timeout=timeout)
        if pool.connection_class is not Connection:
            return None
        return cls(host=kwargs.get("host") or "127.0.0.1", port=int(kwargs.get("port") or 6379),
                   db=int(kwargs.get("db") or 0), username=kwargs.get("username"),
                   password=kwargs.get("password"), timeout=timeout)

    @property
    def open(self) -> bool:
        """Is the link open, so that :meth:`send` may write on it now?"""
        return self._writer is not None and not self._writer.transport.is_closing()

    async def call(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Send ``commands`` in one write and read one reply each, in order."""
        data = pack(commands)
        async with self._failures():
            if self._writer is None:
                await self._open()
            assert self._writer is not None
            self._writer.write(data)
            return await self._replies(len(commands))

    def send(self, commands: Sequence[Sequence[Any]]) -> int:
        """Write ``commands`` at once on the open link (:attr:`open`), from synchronous code;
        their replies are read by :meth:`receive` with the count returned. The store sends a
        batch so at the end of the loop turn that made it, before a task is woken to wait."""
        assert self._writer is not None
        self._writer.write(pack(commands))
        return len(commands)

    async def receive(self, count: int) -> list[Any]:
        """The replies of ``count`` commands written by :meth:`send`, in order."""
        async with self._failures():
            if self._writer is None:  # closed since: what was sent is lost with it
                raise EOFError("the link was closed")
            return await self._replies(count)

    @contextlib.asynccontextmanager
    async def _failures(self) -> AsyncIterator[None]:
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except TimeoutError as exc:
            self.close()
            raise RedisTimeoutError(f"Redis did not answer within {self.timeout} s") from exc
        except (OSError, EOFError, hiredis.ProtocolError) as exc:
            self.close()
            raise RedisConnectionError(f"Redis link failed: {exc!r}") from exc
        except BaseException:
            # Cancelled or failed half-way: what is left to read belongs to no one.
            self.close()
            raise

    async def _open(self) -> None:
        if self.path is not None:
            self._reader, self._writer = await asyncio.open_unix_connection(self.path)
        else:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._parser = hiredis.Reader()
        self.opened += 1
        hello: list[list[Any]] = []
        if self.password is not None:
            hello.append(["AUTH", *([self.username] if self.username else []), self.password])
        if self.db:
            hello.append(["SELECT", self.db])
        if hello:
            self._writer.write(pack(hello))
            for reply in await self._replies(len(hello)):
                if isinstance(reply, ResponseError):
                    raise RedisConnectionError(f"Redis refused the link: {reply}")

    async def _replies(self, count: int) -> list[Any]:
        assert self._reader is not None
        parser = self._parser
        replies: list[Any] = []
        while len(replies) < count:
            reply = parser.gets()
            if reply is False:
                chunk = await self._reader.read(_CHUNK)
                if not chunk:
                    raise EOFError("Redis closed the link")
                parser.feed(chunk)
                continue
            replies.append(_error(str(reply)) if isinstance(reply, hiredis.ReplyError)
                           else reply)
        return replies

    def close(self) -> None:
        """Close the link now (the next call opens a new one)."""
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.transport.abort()
