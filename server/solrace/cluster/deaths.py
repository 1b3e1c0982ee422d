"""Which processes are gone, known in a fraction of a second rather than when a lease lapses.

A process that dies (``kill -9``, a crash, its machine gone) has its TCP connections closed by
its kernel, and Redis drops them at once — among them the link subscribed to the process's
inbox (``sr:{p:PID}:in``, :mod:`solrace.bus.redis_bus`). Its leases and its ``alive`` key, on
the other hand, stay until they lapse (``LEASE_MS``, 1.5 s after the last renewal). So a process
whose inbox nobody listens to is taken for gone: at two looks at least ``GONE_AFTER`` seconds
apart with nobody listening at either and nobody heard between, since a live process's lost
link is made again within that time (its first retries come after 50 and 100 ms).

A wrong guess costs a takeover, never a result: the units' logs are fenced by the lease's epoch
(:mod:`solrace.store.redis_scripts`), so a live owner whose lease was taken writes nothing more
and lets its units go at its next renewal — as when its lease lapses during a long stall. A
process whose inbox is not heard cannot be reached by the commands forwarded to it anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from redis.asyncio.cluster import RedisCluster

from solrace.runtime.redis_connect import RedisClient, proc_key
from solrace.settings import GONE_AFTER

#: Processes remembered as silent at once; beyond, those silent the longest are forgotten
#: (a dead process is looked at only while something of it is left).
MAX_SILENT = 256


def _pairs(reply: Any) -> list[tuple[Any, Any]]:
    """``PUBSUB SHARDNUMSUB``'s answer as (channel, count) pairs, parsed by the client or not
    (a flat list, or a node's answer in a dict)."""
    if isinstance(reply, dict):
        reply = [x for part in reply.values() for x in _pairs(part)]
    if reply and not isinstance(reply[0], (list, tuple)):
        reply = list(zip(reply[::2], reply[1::2], strict=True))
    return [(c, n) for c, n in reply]


class Deaths:
    """The looks at processes' inboxes, and what they told (see the module docstring)."""

    def __init__(self, client: RedisClient, clock: Callable[[], float]) -> None:
        self.client = client
        self.clock = clock
        self._silent_since: dict[str, float] = {}

    async def silent(self, pids: Collection[str]) -> set[str]:
        """The processes among ``pids`` whose inbox nobody listens to now (one round trip;
        on a Redis Cluster, every node is asked and the counts summed)."""
        if not pids:
            return set()
        channels = {proc_key(pid, "in"): pid for pid in pids}
        counts: list[Any] = []
        if isinstance(self.client, RedisCluster):
            # Each channel's count from the node that serves its slot (redis-py sends the
            # command to one default node, which knows only its own slots' subscribers).
            for channel in channels:
                node = self.client.get_node_from_key(channel)
                reply = await self.client.execute_command("PUBSUB SHARDNUMSUB", channel,
                                                          target_nodes=node)
                counts += _pairs(reply)
        else:
            counts = _pairs(await self.client.pubsub_shardnumsub(*channels))
        quiet: set[str] = set()
        for channel, listening in counts:
            name = channel.decode() if isinstance(channel, bytes) else str(channel)
            if name in channels and int(listening) == 0:
                quiet.add(channels[name])
        return quiet

    async def gone(self, pids: Collection[str]) -> set[str]:
        """The processes among ``pids`` that are gone: silent at this look and at one at
        least ``GONE_AFTER`` seconds before, none heard between."""
        quiet = await self.silent(pids)
        now = self.clock()
        out: set[str] = set()
        for pid in pids:
            if pid not in quiet:
                self._silent_since.pop(pid, None)
                continue
            since = self._silent_since.setdefault(pid, now)
            if now - since >= GONE_AFTER:
                out.add(pid)
        if len(self._silent_since) > MAX_SILENT:
            for pid in sorted(self._silent_since, key=self._silent_since.__getitem__)[
                    :len(self._silent_since) - MAX_SILENT]:
                del self._silent_since[pid]
        return out
