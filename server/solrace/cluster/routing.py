"""The router's contract with a connection: a connection hands each command to its router
(:meth:`solrace.cluster.processes.Cluster.route`, with several processes), which answers
:data:`LOCAL` when this process runs the command itself, or forwards it and gives what the
connection's reader awaits. :class:`Client` is what the router needs of a connection
(:class:`solrace.net.connection.Connection` is one): defined here, below the connections, so that
the cluster never imports them."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from solrace.protocol.commands import Command
from solrace.service.presence import Peer

#: What a router answers for a command this process runs itself.
LOCAL = object()


class Client(Peer, Protocol):
    """A connection of this process, as the router sees it: a session it can tell things,
    bind, subscribe, and hand a command to run here."""

    def follow(self, race: str, boards: bool = True, lean: bool = False) -> None: ...

    def unfollow(self, race: str) -> None: ...

    def handle_local(self, cmd: Command) -> asyncio.Future[Any] | None:
        """Run ``cmd`` in this process's hub; what the reader awaits before the next command
        (None: nothing)."""
