"""Which connections speak for which player: to reach a player on every page he has open (a
challenge for him, its answer, a seat), on this process or any other.

A connection counts for its player once it knows him (``conn.who``: from its cookie when it
opened, or once a command made him a player) and until it closes. Here that is a map of this
process's connections by player. With several processes on Redis (:attr:`Online.remote`, a
:class:`Remote`: :mod:`solrace.cluster.reach`) each player's set of processes is kept in Redis
too, and a message for him goes to each of those processes' inboxes, which hand it to his
connections there. A process that dies leaves its name in those sets; a sender skips it (its
``alive`` key has lapsed) and takes it out.

Bounded by the connections themselves: one entry per open connection that knows its player.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from solrace.core.identity import Who
from solrace.protocol import codec
from solrace.protocol.event import Event
from solrace.runtime.supervisor import Supervisor

log = logging.getLogger(__name__)

Message = dict[str, Any]

#: Seconds a process keeps its name in a player's set in Redis after his last connection here
#: closed: a page that reloads comes back at once, and is not dropped in between.
GONE_AFTER = 2.0


class Client(Protocol):
    id: int
    who: Who | None

    def send(self, msg: Any, urgent: bool = True) -> None: ...


class Remote(Protocol):
    """The players' other processes (Redis)."""

    pid: str

    async def add(self, player: str) -> None:
        """This process has connections of ``player``."""

    async def remove(self, player: str) -> None:
        """This process has none of ``player``'s connections any more."""

    async def processes(self, player: str) -> list[str]:
        """The other live processes that have connections of ``player``."""

    def send(self, process: str, player: str, payload: bytes, seated: bool = False) -> None:
        """Hand a message (JSON) to ``process``'s connections of ``player`` (``seated``: it
        gives him a seat, see :meth:`Online.send`)."""


class Online:
    """See the module docstring. ``reply(conn, msg)`` sends a message in order with the
    connection's replies (Hub.reply_later)."""

    def __init__(self, reply: Callable[[Any, Message], None], supervisor: Supervisor) -> None:
        self.reply = reply
        self.supervisor = supervisor
        self.local: dict[str, set[Client]] = {}
        self.tracked: dict[int, tuple[str, Client]] = {}  # connection id -> its player
        self.remote: Remote | None = None
        #: Called with each of a player's connections here when a message gives him a seat
        #: (the matchmaker ends its seek: he would be paired twice).
        self.on_seated: Callable[[Any], None] | None = None  # a Client the matchmaker knows

    def track(self, conn: Client) -> None:
        """``conn`` speaks for its player now (nothing if it knows none); idempotent, and a
        connection whose player changed moves to the new one."""
        who = conn.who
        known = self.tracked.get(conn.id)
        if who is None or (known is not None and known[0] == who.id):
            return
        if known is not None:
            self.forget(conn)
        self.tracked[conn.id] = (who.id, conn)
        here = self.local.setdefault(who.id, set())
        here.add(conn)
        if len(here) == 1 and self.remote is not None:
            self._spawn(self.remote.add(who.id), f"online {who.id}")

    def forget(self, conn: Client) -> None:
        """``conn`` closed."""
        known = self.tracked.pop(conn.id, None)
        if known is None:
            return
        player = known[0]
        here = self.local.get(player)
        if here is None:
            return
        here.discard(conn)
        if here:
            return
        del self.local[player]
        if self.remote is not None:
            asyncio.get_running_loop().call_later(GONE_AFTER, self._gone, player)

    def _gone(self, player: str) -> None:
        if player not in self.local and self.remote is not None:
            self._spawn(self.remote.remove(player), f"offline {player}")

    def here(self, player: str) -> int:
        """How many of ``player``'s connections this process has."""
        return len(self.local.get(player, ()))

    async def reachable(self, player: str) -> bool:
        """Has ``player`` a page open anywhere?"""
        if self.here(player):
            return True
        return self.remote is not None and bool(await self.remote.processes(player))

    def send(self, player: str, msg: Message, seated: bool = False) -> None:
        """Send ``msg`` to every connection of ``player``, here and on the other processes
        (never waits; a player with none open gets nothing). ``seated``: the message gives
        him a seat in a race (a challenge accepted), and a seek he has open anywhere ends."""
        self._here(player, lambda conn: self.reply(conn, msg), seated)
        if self.remote is not None:
            self._spawn(self._send_remote(self.remote, player, codec.encode_json(msg), seated),
                        f"to player {player}")

    def _here(self, player: str, send: Callable[[Client], None], seated: bool) -> None:
        for conn in list(self.local.get(player, ())):
            send(conn)
            if seated and self.on_seated is not None:
                self.on_seated(conn)

    async def _send_remote(self, remote: Remote, player: str, payload: bytes,
                           seated: bool) -> None:
        for process in await remote.processes(player):
            remote.send(process, player, payload, seated)

    def delivered(self, player: str, payload: bytes, seated: bool = False) -> None:
        """A message for ``player`` from another process: to his connections here."""
        event = Event.from_json(payload)
        self._here(player, lambda conn: conn.send(event), seated)

    def _spawn(self, job: Any, name: str) -> None:
        self.supervisor.spawn(job, name, timeout=10)
