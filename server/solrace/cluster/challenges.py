"""Challenges in Redis, shared by every process (``service.challenges.Book``): a challenge made
on one process may be accepted on another, exactly once, and the bounds of
:mod:`solrace.core.challenge` hold for all of them together.

Keys (one hash tag, ``{ch}``: every script touches one slot, also on a Redis Cluster)::

    sr:{ch}:c:ID          the challenge (JSON), expiring a minute after its end
    sr:{ch}:by:PLAYER     sorted set: the ids of the challenges he made, by their end
    sr:{ch}:to:PLAYER     sorted set: the ids of the named challenges made for him
    sr:{ch}:net:NETWORK   sorted set: the ids of those made from that client network
    sr:{ch}:all           sorted set: every open challenge's id

:data:`OPEN` drops the ids whose end came a minute ago (their process told their players then),
applies :func:`solrace.core.challenge.refusal`'s rule to the counts, and stores the challenge,
all in one script; :data:`TAKE` takes one out (only one caller ever gets it: an accept and a
cancel, or two accepts on two processes, cannot both win). What Redis holds here lasts at most
the longest challenge and a minute: a process that dies takes only its expiry timers with it
(the challenges still end, untold: see docs/protocol.md, "Challenges").
"""

from __future__ import annotations

import math
from typing import Any

from redis.exceptions import NoScriptError

from solrace.core.challenge import KEPT_AFTER_MS, Challenge, refuse
from solrace.runtime.redis_connect import RedisClient
from solrace.settings import (
    CHALLENGES_PER_ADDRESS,
    CHALLENGES_PER_PLAYER,
    CHALLENGES_TO_PLAYER,
    MAX_CHALLENGES,
    QUOTA_RESERVE,
    QUOTA_SMALL,
)

PREFIX = "sr:{ch}:"
ALL = PREFIX + "all"

#: ARGV: prefix, now, kept after (ms), id, the challenge (JSON), by, to, network, expires_at,
#: check (1/0), per player, to player, cap, share, reserve, small. Returns {"ok"} or
#: {why, held by the network}.
OPEN = """
local P, NOW, KEPT = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local id, raw, by, to, net = ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local ends = tonumber(ARGV[9])
local keys = {P .. 'all', P .. 'by:' .. by, P .. 'net:' .. net}
if to ~= '' then keys[#keys + 1] = P .. 'to:' .. to end
for _, key in ipairs(keys) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', NOW - KEPT)
end
local held = redis.call('ZCARD', P .. 'net:' .. net)
if ARGV[10] == '1' then
  local total = redis.call('ZCARD', P .. 'all')
  local cap, share = tonumber(ARGV[13]), tonumber(ARGV[14])
  if redis.call('ZCARD', P .. 'by:' .. by) >= tonumber(ARGV[11]) then return {'player', held} end
  if to ~= '' and redis.call('ZCARD', P .. 'to:' .. to) >= tonumber(ARGV[12]) then
    return {'to', held}
  end
  if total + 1 > cap then return {'full', held} end
  if held + 1 > share then return {'share', held} end
  if total + 1 > cap - tonumber(ARGV[15]) and held >= tonumber(ARGV[16]) then
    return {'reserve', held}
  end
end
redis.call('SET', P .. 'c:' .. id, raw, 'PX', math.max(1, ends + KEPT - NOW))
for _, key in ipairs(keys) do
  redis.call('ZADD', key, ends, id)
  redis.call('PEXPIRE', key, math.max(1, ends + KEPT - NOW))
end
return {'ok', held}
"""

#: ARGV: prefix, id. The challenge taken out (JSON), or nil if it was taken already.
TAKE = """
local P, id = ARGV[1], ARGV[2]
local raw = redis.call('GET', P .. 'c:' .. id)
if not raw then return nil end
redis.call('DEL', P .. 'c:' .. id)
local ch = cjson.decode(raw)
redis.call('ZREM', P .. 'all', id)
redis.call('ZREM', P .. 'by:' .. ch.by, id)
redis.call('ZREM', P .. 'net:' .. ch.network, id)
if ch.to ~= '' then redis.call('ZREM', P .. 'to:' .. ch.to, id) end
return raw
"""


class RedisBook:
    """See the module docstring."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._sha: dict[str, str] = {}

    async def _script(self, name: str, body: str, args: list[Any]) -> Any:
        sha = self._sha.get(name)
        if sha is None:
            sha = self._sha[name] = await self.client.script_load(body)
        try:
            return await self.client.evalsha(sha, 1, ALL, *args)
        except NoScriptError:
            self._sha[name] = await self.client.script_load(body)
            return await self.client.evalsha(self._sha[name], 1, ALL, *args)

    async def open(self, ch: Challenge, now: int, check: bool = True) -> None:
        reserve = math.ceil(MAX_CHALLENGES * QUOTA_RESERVE) if MAX_CHALLENGES >= 10 else 0
        why, held = await self._script("open", OPEN, [
            PREFIX, now, KEPT_AFTER_MS, ch.id, ch.dumps(), ch.by, ch.to, ch.network,
            ch.expires_at, 1 if check else 0, CHALLENGES_PER_PLAYER, CHALLENGES_TO_PLAYER,
            MAX_CHALLENGES, CHALLENGES_PER_ADDRESS, reserve, QUOTA_SMALL])
        why = why.decode() if isinstance(why, bytes) else str(why)
        if why != "ok":
            refuse(why, int(held))

    async def get(self, cid: str, now: int) -> Challenge | None:
        raw = await self.client.get(PREFIX + "c:" + cid)
        if raw is None:
            return None
        ch = Challenge.loads(raw)
        return ch if ch.expires_at > now else None

    async def take(self, cid: str) -> Challenge | None:
        raw = await self._script("take", TAKE, [PREFIX, cid])
        return None if raw is None else Challenge.loads(raw)

    async def of(self, player: str, now: int) -> tuple[list[Challenge], list[Challenge]]:
        out: list[list[Challenge]] = []
        for kind in ("to:", "by:"):
            ids = await self.client.zrangebyscore(PREFIX + kind + player, now + 1, "+inf")
            raws = await self.client.mget([PREFIX + "c:" + (
                i.decode() if isinstance(i, bytes) else str(i)) for i in ids]) if ids else []
            found = [Challenge.loads(r) for r in raws if r is not None]
            out.append(sorted((c for c in found if c.expires_at > now),
                              key=lambda c: (c.created_at, c.id)))
        return out[0], out[1]
