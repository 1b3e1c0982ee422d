"""Which processes have connections of a player (``service.online.Remote``), in Redis: one set
of process ids per player, ``sr:online:PLAYER`` (a plain key: each command touches one), kept a
day after its last change. A message for the player goes to each of those processes' inboxes
(:class:`~solrace.protocol.internal.ToPlayer`); a process whose ``alive`` key has lapsed is
skipped and taken out of the set."""

from __future__ import annotations

from collections.abc import Callable

from solrace.protocol import internal
from solrace.runtime.redis_connect import RedisClient, proc_key

#: Seconds a player's set is kept after its last change (his processes each remove
#: themselves when his last connection there closes; this only cleans up after crashes).
KEEP_S = 86_400


def online_key(player: str) -> str:
    return f"sr:online:{player}"


class RedisReach:
    """See the module docstring. ``send_to(pid, msg)``: the bus's inbox sender."""

    def __init__(self, client: RedisClient, pid: str,
                 send_to: Callable[[str, internal.Inbox], None]) -> None:
        self.client = client
        self.pid = pid
        self.send_to = send_to

    async def add(self, player: str) -> None:
        key = online_key(player)
        await self.client.sadd(key, self.pid)
        await self.client.expire(key, KEEP_S)

    async def remove(self, player: str) -> None:
        await self.client.srem(online_key(player), self.pid)

    async def processes(self, player: str) -> list[str]:
        found = [p.decode() if isinstance(p, bytes) else str(p)
                 for p in await self.client.smembers(online_key(player))]
        others = [p for p in found if p != self.pid]
        live = []
        for pid in others:
            if await self.client.exists(proc_key(pid, "alive")):
                live.append(pid)
            else:
                await self.client.srem(online_key(player), pid)
        return live

    def send(self, process: str, player: str, payload: bytes, seated: bool = False) -> None:
        self.send_to(process, internal.ToPlayer(player, payload, seated))
