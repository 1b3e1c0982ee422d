"""The one place that leans on websockets' internals (solrace.net.raw_frames): ready-made
frames written straight to a real connection's socket arrive as messages, in order, text and
binary, small and large; nothing is written to a closed connection. If a release of websockets
changes what the module relies on (``transport``, ``protocol.state``), this fails."""

from __future__ import annotations

import asyncio

from solrace.net import raw_frames
from solrace.protocol.frames import frame
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from .conftest import T


async def test_frames_written_raw_arrive_as_messages() -> None:
    sent = asyncio.get_running_loop().create_future()
    big = b"x" * 70_000  # a 64-bit length

    async def handler(ws: ServerConnection) -> None:
        assert raw_frames.backlog(ws) == 0
        data = (frame(b'{"n":1}', False) + frame(b"\x81\xa1n\x02", True)
                + frame(b"y" * 300, False) + frame(big, False))
        assert raw_frames.write(ws, data)
        await ws.wait_closed()
        assert raw_frames.backlog(ws) in (None, 0)
        assert not raw_frames.write(ws, frame(b"late", False))  # closed: nothing
        sent.set_result(True)

    async with serve(handler, "127.0.0.1", 0, compression=None, max_size=2**20) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=2**20) as ws:
            got = [await asyncio.wait_for(ws.recv(), T) for _ in range(4)]
        assert got == ['{"n":1}', b"\x81\xa1n\x02", "y" * 300, big.decode()]
        assert await asyncio.wait_for(sent, T)
