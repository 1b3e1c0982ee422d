"""A connection of another process, as the owner of a unit sees it (:class:`RemoteSession`).

A command for a unit comes to its owner forwarded by the process that holds the connection
(:mod:`solrace.cluster.processes`), with what the connection is in that unit: the racers it
speaks for, its seats, the races it follows. The owner runs the command for a
:class:`RemoteSession` that stands for the connection: the hub binds it to racers and counts it
among a race's followers as it would a connection of its own. Everything the hub sends it goes
to the connection's process inbox (``Deliver``), and every change of what the connection is
(follow, unfollow, attach, detach) is sent there too (``Op``), where the real connection
applies it: that process keeps the truth, and tells it again with each command it forwards
(:meth:`RemoteSession.update`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from solrace.core.identity import Who
from solrace.protocol import codec, internal
from solrace.protocol.event import Event
from solrace.runtime.redis_connect import unit_of

if TYPE_CHECKING:
    from solrace.bus.redis_bus import RedisBus

#: The owner's followers from other processes: race -> (pid, connection) -> its session.
Followers = dict[str, dict[tuple[str, int], "RemoteSession"]]


class RemoteSession:
    """A connection of another process, as the owner of a unit sees it: what it speaks for
    and follows there; everything sent to it goes to that process's inbox."""

    def __init__(self, bus: RedisBus, followers: Followers, pid: str, conn: int,
                 address: str) -> None:
        self.bus = bus
        #: The owner's followers of each race (this session is in those it follows).
        self.followers = followers
        self.pid = pid
        self.conn = conn
        self.id = (1 << 62) + (hash((pid, conn)) & ((1 << 61) - 1))
        self.address = address
        self.players: dict[str, str] = {}
        self.seats: dict[str, str] = {}
        self.follows: dict[str, bool] = {}
        self.lean: set[str] = set()
        #: The player the connection is (as its own process says), or None.
        self.who: Who | None = None
        #: Forgotten here without telling its process (it is gone, or thought to be).
        self.silent = False

    def update(self, where: internal.Where) -> None:
        """What the connection is in the unit, as its own process says (the truth)."""
        for mine in (self.players, self.seats, self.follows):
            for race in [r for r in mine if unit_of(r) == where.unit]:
                del mine[race]
        self.players.update(where.players)
        self.seats.update(where.seats)
        self.follows.update(where.follows)
        self.lean = {r for r in self.lean if unit_of(r) != where.unit} | set(where.lean)
        self.who = where.who

    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None:
        payload = msg.encoded(False) if isinstance(msg, Event) else codec.encode_json(msg)
        self.bus.send_to(self.pid, internal.Deliver(self.conn, payload))

    def _op(self, op: str, race: str, value: Any = None) -> None:
        if self.silent:
            return
        self.bus.send_to(self.pid, internal.Op(self.conn, op, race, value))

    def follow(self, race: str, boards: bool = True, lean: bool = False) -> None:
        self.follows[race] = boards
        if lean:
            self.lean.add(race)
        else:
            self.lean.discard(race)
        self.followers.setdefault(race, {})[(self.pid, self.conn)] = self
        self._op("follow", race, [boards, lean])

    def unfollow(self, race: str) -> None:
        self.follows.pop(race, None)
        self.lean.discard(race)
        self.followers.get(race, {}).pop((self.pid, self.conn), None)
        self._op("unfollow", race)

    def attach(self, race: str, player: str) -> None:
        self.players[race] = player
        self.seats[race] = player
        self._op("attach", race, player)

    def detach(self, race: str) -> str | None:
        player = self.players.pop(race, None)
        if player is not None:
            self._op("detach", race)
        return player
