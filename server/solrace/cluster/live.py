"""The home page's live figures of every process on one Redis, put together
(:class:`solrace.service.showcase.Shared`).

Every ``LIVE_EVERY_S`` seconds each process publishes what it counts and reads everyone's back
(:meth:`SharedFigures.exchange`), under one hash tag, ``{live}`` (one slot on a Redis Cluster)::

    sr:{live}:procs      set: the processes that published lately (one whose figures lapsed
                         is taken out by the next reader)
    sr:{live}:p:PID      string, expires after LIVE_TTL_S: JSON {races, featured, rank}
    sr:{live}:v:PID      HyperLogLog, expires with it: the process's visitors (each id hashed
                         to 8 bytes)

A process publishes in one script (the HyperLogLog is replaced in the same script, so a reader
never sees it half built) and reads with ``PFCOUNT`` over every live process's HyperLogLog: a
visitor connected to two processes (a tab on each) counts once. ``PFCOUNT`` estimates (0.81 %
standard error; small counts come out exact), and costs at most 12 KB per process. Races are
summed (a race runs in one process); the featured race is the best ranked of the processes'
offers (:func:`solrace.core.showcase.rank`).

How stale: a process's own figures are its last look (at most ``LIVE_EVERY_S`` old), the
others' at most ``LIVE_EVERY_S`` older than that; a process that died stays counted until its
keys expire, ``LIVE_TTL_S`` after its last publish.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from solrace.runtime.redis_connect import RedisClient
from solrace.service.showcase import Local, Totals
from solrace.settings import LIVE_TTL_S

PROCS = "sr:{live}:procs"


def figures_key(pid: str) -> str:
    return f"sr:{{live}}:p:{pid}"


def visitors_key(pid: str) -> str:
    return f"sr:{{live}}:v:{pid}"


#: KEYS: procs, figures, visitors; ARGV: pid, ttl (ms), figures (JSON), visitor hashes...
#: (PFADD in slices: Lua's unpack has a limit of a few thousand values.)
PUBLISH = """
redis.call('DEL', KEYS[3])
redis.call('PFADD', KEYS[3])
for i = 4, #ARGV, 1000 do
  redis.call('PFADD', KEYS[3], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""


def hashed(visitor: str) -> str:
    """A visitor's id in 16 hex digits: as good for counting, a quarter of the bytes."""
    return hashlib.blake2b(visitor.encode(), digest_size=8).hexdigest()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SharedFigures:
    """This process's figures published on Redis, and everyone's read back (the module
    docstring). ``client``: the process's Redis client; ``pid``: the process."""

    def __init__(self, client: RedisClient, pid: str, ttl_s: float = LIVE_TTL_S) -> None:
        self.client = client
        self.pid = pid
        self.ttl_ms = int(ttl_s * 1000)
        self._publish = client.register_script(PUBLISH)

    async def exchange(self, local: Local) -> Totals:
        figures = json.dumps({"races": local.races, "featured": local.featured,
                              "rank": local.rank}, separators=(",", ":"))
        await self._publish(keys=[PROCS, figures_key(self.pid), visitors_key(self.pid)],
                            args=[self.pid, self.ttl_ms, figures,
                                  *sorted(hashed(v) for v in local.visitors)])
        pids = sorted(_text(p) for p in await self.client.smembers(PROCS))
        if not pids:
            return Totals(0, 0, None)
        values = await self.client.mget([figures_key(p) for p in pids])
        gone = [p for p, v in zip(pids, values, strict=True) if v is None]
        if gone:
            await self.client.srem(PROCS, *gone)
        live = [(p, json.loads(v)) for p, v in zip(pids, values, strict=True) if v is not None]
        players = await self.client.pfcount(*(visitors_key(p) for p, _ in live)) if live else 0
        races = sum(int(f.get("races", 0)) for _, f in live)
        offers = [f for _, f in live if f.get("featured") is not None and f.get("rank")]
        featured = max(offers, key=lambda f: f["rank"])["featured"] if offers else None
        return Totals(int(players), races, featured)

    async def leave(self) -> None:
        """This process stops: its figures go at once (not at their expiry)."""
        await self.client.delete(figures_key(self.pid), visitors_key(self.pid))
        await self.client.srem(PROCS, self.pid)
