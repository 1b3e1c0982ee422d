"""An async Python client for the race server (used by tests, the benchmark and bots).

``RaceClient`` keeps one WebSocket. A background reader task routes every message: a message
whose ``rid`` matches a pending request resolves that request (an ``error`` reply raises
:class:`ServerError`); everything else goes to :attr:`RaceClient.events` (an unbounded queue:
a client that never reads it should pass ``keep_events=False``, which also skips decoding
events other than ``state``: cheap enough for load generators). The latest ``state`` per race
is kept in :attr:`RaceClient.states`.

If the connection closes, pending requests fail with ``ConnectionError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from solrace.protocol.codec import encode_json

loads: Callable[[bytes], Any]
try:  # orjson parses a state message several times faster than the stdlib
    from orjson import loads
except ImportError:  # pragma: no cover - orjson is a dependency; stdlib as a fallback
    loads = json.loads

Message = dict[str, Any]


class ServerError(Exception):
    """An ``error`` reply from the server."""

    def __init__(self, msg: Message) -> None:
        super().__init__(f"{msg.get('code')}: {msg.get('message')}")
        self.code: str = str(msg.get("code"))
        self.message: str = str(msg.get("message"))
        self.reply = msg


def _wanted(frame: bytes, binary: bool) -> bool:
    """Could this frame be a reply (it has a ``rid``) or a ``state``? A cheap byte test."""
    if not binary:
        return b'"rid"' in frame or b'"state"' in frame
    return b"\xa3rid" in frame or b"\xa5state" in frame


class RaceClient:
    def __init__(self, ws: ClientConnection, binary: bool = False, keep_events: bool = True):
        self.ws = ws
        self.binary = binary
        self.keep_events = keep_events
        self.events: asyncio.Queue[Message] = asyncio.Queue()
        self.states: dict[str, Message] = {}
        self.players: dict[str, str] = {}  # race -> player id
        self.tokens: dict[str, str] = {}  # race -> racer token
        self._pending: dict[Any, asyncio.Future[Message]] = {}
        self._rids = itertools.count(1)
        self._state_seen = asyncio.Event()
        self.closed = False  # set by the reader once the connection is gone
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls,
        url: str,
        binary: bool = False,
        keep_events: bool = True,
        batch: bool = True,
        **kwargs: Any,
    ) -> RaceClient:
        """Open a connection to ``ws://host:port/ws``; with ``batch`` (the default) the server
        may send several messages in one frame (``/ws?batch=1``, see docs/protocol.md)."""
        if batch and "batch=" not in url:
            url += ("&" if "?" in url else "?") + "batch=1"
        kwargs.setdefault("compression", None)
        kwargs.setdefault("max_size", 2**22)
        ws = await connect(url, **kwargs)
        return cls(ws, binary=binary, keep_events=keep_events)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def detach(self) -> ClientConnection:
        """Stop the reader task and hand over the bare connection (``states`` stays as it
        was): for load generators that read their own replies, as a bare client would."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        return self.ws

    async def __aenter__(self) -> RaceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --------------------------------------------------------------- transport
    def decode(self, frame: bytes) -> list[Message]:
        """Decode a frame's payload into its messages: msgpack for a binary client, UTF-8
        JSON otherwise (the server answers in the encoding of the client's frames); a batch
        frame holds an array of messages, any other frame one message."""
        obj = msgpack.unpackb(frame, raw=False) if self.binary else loads(frame)
        return obj if isinstance(obj, list) else [obj]

    async def _read(self) -> None:
        try:
            while True:
                # decode=False: text frames stay bytes, so frames skipped below are never
                # decoded from UTF-8 at all.
                frame = await self.ws.recv(decode=False)
                if not self.keep_events and not _wanted(frame, self.binary):
                    continue
                for msg in self.decode(frame):
                    self._route(msg)
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            self._state_seen.set()  # wakes wait_state, which then raises ConnectionError
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
                    fut.exception()  # its request may have given up waiting already
            self._pending.clear()

    def _route(self, msg: Message) -> None:
        if msg.get("type") == "state":
            known = self.states.get(msg["race"])
            if known is None or msg["seq"] >= known["seq"]:  # a late state never wins
                self.states[msg["race"]] = msg
            self._state_seen.set()
        rid = msg.get("rid")
        fut = self._pending.pop(rid, None) if rid is not None else None
        if fut is not None and not fut.done():
            fut.set_result(msg)
        elif self.keep_events:
            self.events.put_nowait(msg)

    async def send(self, msg: Message) -> None:
        """Send without waiting for a reply."""
        if self.binary:
            await self.ws.send(msgpack.packb(msg))
        else:
            await self.ws.send(encode_json(msg), text=True)

    async def request(self, msg: Message, timeout: float = 10.0) -> Message:
        """Send ``msg`` with a fresh ``rid`` and return the reply; ServerError on ``error``."""
        rid = next(self._rids)
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            await self.send({**msg, "rid": rid})
            async with asyncio.timeout(timeout):  # cheaper than wait_for: no extra task
                reply = await fut
        finally:
            self._pending.pop(rid, None)
        if reply.get("type") == "error":
            raise ServerError(reply)
        return reply

    async def next_event(self, *types: str, timeout: float = 10.0) -> Message:
        """The next queued event (of one of ``types`` if given; others are dropped)."""
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.events.get()
                if not types or msg.get("type") in types:
                    return msg

    # ---------------------------------------------------------------- commands
    async def create(self, game: str, **options: Any) -> Message:
        return await self.request({"type": "create", "game": game, **options})

    async def join(
        self, race: str, name: str | None = None, token: str | None = None, boards: bool = True,
        bot: bool = False, lean: bool = False,
    ) -> Message:
        """Join (or resume with ``token``); returns ``joined``. The ``snapshot`` (and ``state``
        when running) follow as events. ``boards=False``: no ``board`` views of the other
        racers (a bot has no use for them). ``bot=True``: this racer is a program, and every
        client labels it so. ``lean=True``: moves and undos are answered with lean states
        (no board, no legal list: the client works them out)."""
        msg: Message = {"type": "join", "race": race}
        if lean:
            msg["lean"] = True
        if not boards:
            msg["boards"] = False
        if bot:
            msg["bot"] = True
        if name is not None:
            msg["name"] = name
        if token is not None:
            msg["token"] = token
        reply = await self.request(msg)
        self.players[race] = reply["player"]
        self.tokens[race] = reply["token"]
        return reply

    async def watch(self, race: str) -> Message:
        return await self.request({"type": "watch", "race": race})

    async def start(self, race: str, host_token: str) -> Message:
        return await self.request({"type": "start", "race": race, "token": host_token})

    async def ready(self, race: str) -> Message:
        return await self.request({"type": "ready", "race": race})

    async def move(self, race: str, move: str, seq: int | None = None) -> Message:
        """Play ``move``; ``seq`` defaults to 1 + the last known state's seq. Returns ``state``."""
        if seq is None:
            seq = self.states[race]["seq"] + 1
        return await self.request({"type": "move", "race": race, "move": move, "seq": seq})

    async def undo(self, race: str, seq: int | None = None) -> Message:
        if seq is None:
            seq = self.states[race]["seq"] + 1
        return await self.request({"type": "undo", "race": race, "seq": seq})

    async def resign(self, race: str) -> Message:
        return await self.request({"type": "resign", "race": race})

    async def claim(self, race: str) -> Message:
        return await self.request({"type": "claim", "race": race})

    async def hint(self, race: str) -> Message:
        return await self.request({"type": "hint", "race": race}, timeout=30.0)

    async def ping(self) -> Message:
        return await self.request({"type": "ping"})

    async def wait_state(self, race: str, timeout: float = 10.0) -> Message:
        """Wait until a ``state`` for ``race`` has arrived (e.g. at the start).

        Raises ``ConnectionError`` if the connection closes first: a bot whose server went
        away while it waited must move on to another one, not wait out ``timeout``."""
        async with asyncio.timeout(timeout):
            while race not in self.states:
                if self.closed:
                    raise ConnectionError("connection closed")
                self._state_seen.clear()
                await self._state_seen.wait()
        return self.states[race]
