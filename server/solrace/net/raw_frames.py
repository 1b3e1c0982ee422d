"""Ready-made WebSocket frames (:func:`solrace.protocol.frames.frame`), written straight to a
connection's socket.

A race event goes to many connections at once: building its frame once and writing those
bytes to each socket in one ``write`` costs a fraction of ``await ws.send()`` per connection
(the connection's send path, its lock, a task switch), and corked writes (many frames in one
system call) need it too. This module is the only place that leans on
the internals of ``websockets``' asyncio connection to do so: its ``transport`` (the asyncio
transport under it) and ``protocol.state`` (whether the connection is open). It also holds the
one reach into the server's internals, :func:`handler_tasks` (a shutdown that must not wait on a
stuck connection). If a release of ``websockets`` changes them,
tests/solrace/test_raw_frames.py fails (``handler_tasks``: test_server.py's shutdown test).

Frames written here bypass the library's own bookkeeping, which is safe for what the server
sends this way: complete, unmasked, unfragmented data frames, never while the library itself
is sending (the connection's writer task uses ``ws.send()`` only when frames wait in its queue,
and then everything goes through the queue until it is empty; see
:meth:`solrace.net.connection.Connection.send`).
"""

from __future__ import annotations

import asyncio

from websockets.asyncio.server import Server, ServerConnection
from websockets.protocol import State


def backlog(ws: ServerConnection) -> int | None:
    """Bytes waiting in the socket's write buffer; None once there is no socket to write to."""
    transport = ws.transport
    return None if transport is None else transport.get_write_buffer_size()


def write(ws: ServerConnection, data: bytes) -> bool:
    """Write whole frames to the socket now, if the connection is open; False (and nothing
    written) otherwise: it may have just closed, and its reader notices and cleans up."""
    transport = ws.transport
    if ws.protocol.state is not State.OPEN or transport is None:
        return False
    try:
        transport.write(data)
    except Exception:  # a socket closing under us: the same as closed
        return False
    return True


def handler_tasks(server: Server) -> set[asyncio.Task[None]]:
    """The server's tasks still handling a connection: a WebSocket session, an HTTP request,
    or a TCP connection that has not sent its request yet (``open_timeout`` ends those)."""
    return set(server.handler_tasks)
