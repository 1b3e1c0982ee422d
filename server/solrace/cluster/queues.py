"""Quick-race queues in Redis, shared by every process (``matchmaker.Queues``).

Keys (one hash tag, ``{q}``: a script touches one slot)::

    sr:{q}:w:QUEUE   hash: seek id -> the waiting seeker (JSON)
    sr:{q}:m         hash: seek id -> a seeker taken out by a process that is making his race
                     (JSON, with that process and when)

:data:`OFFER` runs :func:`solrace.core.pairing.best`'s rule in Lua over the waiting seekers
and, in the same script, takes the one it pairs out of the queue (into ``m``): nobody is paired
twice. The pairing process confirms once the race is made (the seeker leaves ``m``). If it dies
first, :meth:`RedisQueues.recover` (every process runs it every few seconds) puts a seeker
held in ``m`` for longer than ``MATCHED_TIMEOUT_MS`` by a process that is gone back into his
queue, if his own process still runs.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from typing import Any

from redis.exceptions import NoScriptError, ResponseError

from solrace.cluster.connect import RedisClient, proc_key
from solrace.core.pairing import Seek
from solrace.core.race_parts import RaceError
from solrace.settings import MATCHED_TIMEOUT_MS, PAIR_ANYONE_S, PAIR_WIDEN, PAIR_WINDOW, QUEUE_CAP

log = logging.getLogger(__name__)

MATCHED = "sr:{q}:m"


def waiting_key(queue: str) -> str:
    return f"sr:{{q}}:w:{queue}"


#: KEYS: the queue's hash, the matched hash. ARGV: the seek (JSON), now, window, widen,
#: anyone (s), cap, this process. The seeker paired with (JSON), or nil (queued), or FULL.
OFFER = """
local seek = cjson.decode(ARGV[1])
local now, window, widen = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local anyone, cap = tonumber(ARGV[5]) * 1000, tonumber(ARGV[6])
local all = redis.call('HGETALL', KEYS[1])
local best, bestid, bestgap, bestsince
for i = 1, #all, 2 do
  local other = cjson.decode(all[i + 1])
  if other.player ~= seek.player then
    local gap = math.abs(other.rating - seek.rating)
    local waited = now - other.since
    local ok = waited >= anyone or gap <= window + widen * math.max(0, waited) / 1000
    if ok and (best == nil or gap < bestgap or (gap == bestgap and (other.since < bestsince
        or (other.since == bestsince and all[i] < bestid)))) then
      best, bestid, bestgap, bestsince = all[i + 1], all[i], gap, other.since
    end
  end
end
if best then
  redis.call('HDEL', KEYS[1], bestid)
  redis.call('HSET', KEYS[2], bestid, cjson.encode({seek = best, by = ARGV[7], at = now}))
  return best
end
if #all / 2 >= cap then return redis.error_reply('FULL') end
redis.call('HSET', KEYS[1], seek.id, ARGV[1])
return nil
"""

#: KEYS: the matched hash, the seeker's queue hash. ARGV: seek id, the seek (JSON). Back in
#: his queue if he was held as matched: 1, else 0.
GIVE_BACK = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
return 0
"""


def _seek(raw: Any) -> Seek:
    data = json.loads(raw)
    return Seek(**data)


class RedisQueues:
    """See the module docstring. ``process``: this process's id (in the leases and keys)."""

    def __init__(self, client: RedisClient, process: str) -> None:
        self.client = client
        self.process = process
        self._sha: dict[str, str] = {}

    async def _script(self, name: str, body: str, keys: list[str], args: list[Any]) -> Any:
        sha = self._sha.get(name)
        if sha is None:
            sha = self._sha[name] = await self.client.script_load(body)
        try:
            return await self.client.evalsha(sha, len(keys), *keys, *args)
        except NoScriptError:
            self._sha[name] = await self.client.script_load(body)
            return await self.client.evalsha(self._sha[name], len(keys), *keys, *args)

    async def offer(self, seek: Seek, now: int) -> Seek | None:
        try:
            raw = await self._script(
                "offer", OFFER, [waiting_key(seek.queue), MATCHED],
                [json.dumps(asdict(seek)), now, PAIR_WINDOW, PAIR_WIDEN, PAIR_ANYONE_S,
                 QUEUE_CAP, self.process])
        except ResponseError as exc:
            if "FULL" in str(exc):
                raise RaceError("limit_reached", "too many players are waiting for this "
                                "race: try again in a moment") from None
            raise
        return None if raw is None else _seek(raw)

    async def cancel(self, seek: Seek) -> bool:
        return bool(await self.client.hdel(waiting_key(seek.queue), seek.id))

    async def confirm(self, seek: Seek) -> None:
        await self.client.hdel(MATCHED, seek.id)

    async def give_back(self, seek: Seek) -> None:
        await self._script("give_back", GIVE_BACK, [MATCHED, waiting_key(seek.queue)],
                           [seek.id, json.dumps(asdict(seek))])

    async def alive(self, process: str) -> bool:
        return bool(await self.client.exists(proc_key(process, "alive")))

    async def recover(self, now: int) -> int:
        """Seekers held as matched by a process that died before it made their race: back
        to their queue (if their own process runs). How many."""
        back = 0
        for raw in (await self.client.hgetall(MATCHED)).values():
            held = json.loads(raw)
            if now - held["at"] < MATCHED_TIMEOUT_MS or await self.alive(held["by"]):
                continue
            seek = _seek(held["seek"])
            if await self.alive(seek.process):
                await self.give_back(seek)
                back += 1
            else:
                await self.confirm(seek)  # both gone: nobody to pair
        return back
