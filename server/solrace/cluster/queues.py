"""Quick-race queues in Redis, shared by every process (``matchmaker.Queues``): the rule of
:mod:`solrace.core.pairing`, in Lua, so that every change to the queues is one atomic script.

Keys (one hash tag, ``{q}``: every script touches one slot, also on a Redis Cluster; the
scripts name some keys they work out themselves — a player's, the queue of his previous seek —
which is allowed because they are in that same slot)::

    sr:{q}:w:QUEUE      hash: seek id -> the waiting seeker (JSON)
    sr:{q}:queues       set: the queues that may hold seekers (the pass looks at these)
    sr:{q}:s            hash: player -> "QUEUE<tab>seek id", his one seek
    sr:{q}:m            hash: seek id -> a seeker taken out by a process that is making his
                        race (JSON, with that process and when)
    sr:{q}:last:PLAYER  the player id of his previous quick race's opponent
    sr:{q}:back:PLAYER  the queue whose head he goes back to (left alone by a no-show)
    sr:{q}:barred:PLAYER  until when he may not seek (a no-show)
    sr:{q}:seat:PLAYER  the race he was paired into a moment ago (his seat waits for him)

(the last four as "value<tab>until", by the servers' clock; Redis expires them a minute
later)

:data:`OFFER` replaces the player's previous seek, runs :func:`solrace.core.pairing.best`'s
rule over the waiting seekers and, in the same script, takes the one it pairs out of the queue
(into ``m``): nobody is paired twice. :data:`PASS` does the same for
:func:`solrace.core.pairing.pairs` over every queue; each process runs it every second (two
runs at once are two atomic scripts: the second finds the first's pairs gone). The pairing
process confirms once the race is made (the seeker leaves ``m``). If it dies first,
:meth:`RedisQueues.recover` (every process runs it every few seconds) puts a seeker held in
``m`` for longer than ``MATCHED_TIMEOUT_MS`` by a process that is gone back into his queue, if
his own process still runs.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from typing import Any

from redis.exceptions import NoScriptError

from solrace.core.pairing import Offer, Seek
from solrace.runtime.redis_connect import RedisClient, proc_key
from solrace.settings import (
    BACK_AT_HEAD_S,
    LAST_OPPONENT_MS,
    MATCHED_TIMEOUT_MS,
    NO_SHOW_PAUSE_S,
    PAIR_ANYONE_S,
    PAIR_WIDEN,
    PAIR_WINDOW,
    QUEUE_CAP,
    SEAT_GRACE_S,
)

log = logging.getLogger(__name__)

PREFIX = "sr:{q}:"
MATCHED = PREFIX + "m"
SEEKS = PREFIX + "s"
QUEUES = PREFIX + "queues"


def waiting_key(queue: str) -> str:
    return f"{PREFIX}w:{queue}"


#: The rule (solrace.core.pairing), shared by the scripts. ``R``: the settings (window,
#: widen, anyone in ms), ``P``: the key prefix, ``NOW``, ``BY``: this process, ``TTL``: how
#: long a last opponent is kept (ms); each script sets them from its arguments first.
RULE = """
local R, P, NOW, BY, TTL
local function window(waited)
  if waited >= R.anyone then return math.huge end
  return R.window + R.widen * math.max(0, waited) / 1000
end
local function fits(a, b, rated)
  if a.player == b.player then return false end
  if rated and a.network and a.network ~= '' and a.network == b.network then return false end
  return math.abs(a.rating - b.rating) <= window(NOW - math.min(a.since, b.since))
end
local function again(a, b) return a.last == b.player or b.last == a.player end
-- Is other1 a better partner for seek than other2? (repeat, gap, since, id), smaller first.
local function better(seek, o1, o2, rated)
  local r1, r2 = rated and again(seek, o1), rated and again(seek, o2)
  if r1 ~= r2 then return r2 end
  local g1, g2 = math.abs(o1.rating - seek.rating), math.abs(o2.rating - seek.rating)
  if g1 ~= g2 then return g1 < g2 end
  if o1.since ~= o2.since then return o1.since < o2.since end
  return o1.id < o2.id
end
local function rated_queue(queue) return string.sub(queue, -2) == ':r' end
-- A player's expiring facts are "value<tab>until" (until: unix ms, by the clock of the
-- callers, which NOW is; Redis's own expiry only cleans up, a little later).
local function fresh(key)
  local v = redis.call('GET', key)
  if not v then return nil end
  local tab = string.find(v, '\t', 1, true)
  if tonumber(string.sub(v, tab + 1)) <= NOW then return nil end
  return string.sub(v, 1, tab - 1)
end
local function keep(key, value, ttl)
  redis.call('SET', key, value .. '\t' .. string.format('%d', NOW + ttl), 'PX', ttl + 60000)
end
-- A seeker leaves his queue and his player's index (if it still names him).
local function remove(s)
  redis.call('HDEL', P .. 'w:' .. s.queue, s.id)
  if redis.call('HGET', P .. 's', s.player) == s.queue .. '\\t' .. s.id then
    redis.call('HDEL', P .. 's', s.player)
  end
end
-- a and b are paired by this process: out of the queue, held as matched, each the other's
-- last opponent. ``held``: the seekers who were waiting (the new seeker of OFFER was not).
local function take(a, b, held)
  for _, s in ipairs(held) do
    remove(s)
    redis.call('HSET', P .. 'm', s.id, cjson.encode({seek = s.raw, by = BY, at = NOW}))
  end
  keep(P .. 'last:' .. a.player, b.player, TTL)
  keep(P .. 'last:' .. b.player, a.player, TTL)
end
local function settings(first)
  R = {window = tonumber(ARGV[first]), widen = tonumber(ARGV[first + 1]),
       anyone = tonumber(ARGV[first + 2])}
end
"""

#: ARGV: prefix, now, window, widen, anyone (ms), this process, last ttl, the seek (JSON),
#: cap. Returns JSON {seek, match?, replaced?, full?} or {barred: ms}.
OFFER = RULE + """
P, NOW, BY, TTL = ARGV[1], tonumber(ARGV[2]), ARGV[6], tonumber(ARGV[7])
settings(3)
local seek, cap = cjson.decode(ARGV[8]), tonumber(ARGV[9])
local barred = fresh(P .. 'barred:' .. seek.player)
if barred then return cjson.encode({barred = tonumber(barred) - NOW}) end
local out = {}
local old = redis.call('HGET', P .. 's', seek.player)
if old then
  local tab = string.find(old, '\\t', 1, true)
  local oq, oid = string.sub(old, 1, tab - 1), string.sub(old, tab + 1)
  out.replaced = redis.call('HGET', P .. 'w:' .. oq, oid) or nil
  redis.call('HDEL', P .. 'w:' .. oq, oid)
  redis.call('HDEL', P .. 's', seek.player)
end
seek.last = fresh(P .. 'last:' .. seek.player) or ''
if fresh(P .. 'back:' .. seek.player) == seek.queue then
  redis.call('DEL', P .. 'back:' .. seek.player)
  seek.since = math.min(seek.since, NOW - R.anyone)
end
local rated = rated_queue(seek.queue)
local key = P .. 'w:' .. seek.queue
local all = redis.call('HGETALL', key)
local best
for i = 1, #all, 2 do
  local other = cjson.decode(all[i + 1])
  other.raw = all[i + 1]
  if fits(seek, other, rated) and (best == nil or better(seek, other, best, rated)) then
    best = other
  end
end
out.seek = cjson.encode(seek)
if best then
  take(seek, best, {best})
  out.match = best.raw
  return cjson.encode(out)
end
if #all / 2 >= cap then
  out.full = true
  return cjson.encode(out)
end
redis.call('HSET', key, seek.id, out.seek)
redis.call('HSET', P .. 's', seek.player, seek.queue .. '\\t' .. seek.id)
redis.call('SADD', P .. 'queues', seek.queue)
return cjson.encode(out)
"""

#: ARGV: prefix, now, window, widen, anyone (ms), this process, last ttl. One pass over every
#: queue (solrace.core.pairing.pairs); returns the pairs' seekers (JSON), two by two.
PASS = RULE + """
P, NOW, BY, TTL = ARGV[1], tonumber(ARGV[2]), ARGV[6], tonumber(ARGV[7])
settings(3)
local out = {}
-- The seekers not taken yet, in rating order, are a linked list: before[i], after[i] (0 and
-- #line + 1: none).
local function nearest(line, before, after, i, rated)
  local seek = line[i]
  local reach = window(NOW - seek.since)
  local found, spare
  for _, step in ipairs({before, after}) do
    local j = step[i]
    while j >= 1 and j <= #line do
      local other = line[j]
      local gap = math.abs(other.rating - seek.rating)
      if gap > reach or (found and gap > math.abs(line[found].rating - seek.rating)) then
        break
      end
      if fits(seek, other, rated) then
        if rated and again(seek, other) then
          if spare == nil or better(seek, other, line[spare], rated) then spare = j end
        elseif found == nil or better(seek, other, line[found], rated) then
          found = j
        end
      end
      j = step[j]
    end
  end
  return found or spare
end
for _, queue in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  local all = redis.call('HGETALL', P .. 'w:' .. queue)
  if #all == 0 then
    redis.call('SREM', P .. 'queues', queue)
  elseif #all >= 4 then
    local line = {}
    for i = 1, #all, 2 do
      local s = cjson.decode(all[i + 1])
      s.raw = all[i + 1]
      line[#line + 1] = s
    end
    table.sort(line, function(a, b)
      if a.rating ~= b.rating then return a.rating < b.rating end
      if a.since ~= b.since then return a.since < b.since end
      return a.id < b.id
    end)
    local age, before, after = {}, {}, {}
    for i, s in ipairs(line) do
      s.at, age[i], before[i], after[i] = i, s, i - 1, i + 1
    end
    table.sort(age, function(a, b)
      if a.since ~= b.since then return a.since < b.since end
      return a.id < b.id
    end)
    local rated, taken = rated_queue(queue), {}
    for _, s in ipairs(age) do
      if not taken[s.at] then
        local j = nearest(line, before, after, s.at, rated)
        if j then
          for _, k in ipairs({s.at, j}) do
            taken[k] = true
            if before[k] >= 1 then after[before[k]] = after[k] end
            if after[k] <= #line then before[after[k]] = before[k] end
          end
          take(s, line[j], {s, line[j]})
          out[#out + 1] = s.raw
          out[#out + 1] = line[j].raw
        end
      end
    end
  end
end
return out
"""

#: ARGV: prefix, seek id, player, queue. 1 if he was waiting (now gone), else 0.
CANCEL = RULE + """
P = ARGV[1]
local n = redis.call('HDEL', P .. 'w:' .. ARGV[4], ARGV[2])
if redis.call('HGET', P .. 's', ARGV[3]) == ARGV[4] .. '\\t' .. ARGV[2] then
  redis.call('HDEL', P .. 's', ARGV[3])
end
return n
"""

#: ARGV: prefix, player, queue, process, connection, new seek id. The player's seek waiting in
#: that queue as it was and as it is now, that connection's under the new id (a page
#: reloaded), or nil.
TAKE_OVER = """
local P = ARGV[1]
local old = redis.call('HGET', P .. 's', ARGV[2])
if not old then return nil end
local tab = string.find(old, '\\t', 1, true)
if string.sub(old, 1, tab - 1) ~= ARGV[3] then return nil end
local key = P .. 'w:' .. ARGV[3]
local raw = redis.call('HGET', key, string.sub(old, tab + 1))
if not raw then return nil end
local seek = cjson.decode(raw)
seek.process, seek.conn, seek.id = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local new = cjson.encode(seek)
redis.call('HDEL', key, string.sub(old, tab + 1))
redis.call('HSET', key, seek.id, new)
redis.call('HSET', P .. 's', ARGV[2], ARGV[3] .. '\\t' .. seek.id)
return {raw, new}
"""

#: ARGV: prefix, seek id, the seek (JSON), player, queue. Back in his queue if he was held as
#: matched and seeks nothing else now: 1, else 0.
GIVE_BACK = """
local P = ARGV[1]
if redis.call('HDEL', P .. 'm', ARGV[2]) == 0 then return 0 end
if redis.call('HEXISTS', P .. 's', ARGV[4]) == 1 then return 0 end
redis.call('HSET', P .. 'w:' .. ARGV[5], ARGV[2], ARGV[3])
redis.call('HSET', P .. 's', ARGV[4], ARGV[5] .. '\\t' .. ARGV[2])
redis.call('SADD', P .. 'queues', ARGV[5])
return 1
"""

#: ARGV: prefix, now, queue, back (ms), pause (ms), how many present, the present players,
#: then the absent ones. The absent players' seeks, dropped (JSON).
NO_SHOW = RULE + """
P, NOW = ARGV[1], tonumber(ARGV[2])
local queue, back, pause, n = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local dropped = {}
for i = 7, 6 + n do
  keep(P .. 'back:' .. ARGV[i], queue, back)
end
for i = 7 + n, #ARGV do
  local player = ARGV[i]
  keep(P .. 'barred:' .. player, string.format('%d', NOW + pause), pause)
  local old = redis.call('HGET', P .. 's', player)
  if old then
    local tab = string.find(old, '\\t', 1, true)
    local key = P .. 'w:' .. string.sub(old, 1, tab - 1)
    local raw = redis.call('HGET', key, string.sub(old, tab + 1))
    if raw then dropped[#dropped + 1] = raw end
    redis.call('HDEL', key, string.sub(old, tab + 1))
    redis.call('HDEL', P .. 's', player)
  end
end
return dropped
"""


def _seek(raw: Any) -> Seek:
    return Seek.from_dict(json.loads(raw))


def _rule_args(now: int, process: str) -> list[Any]:
    return [PREFIX, now, PAIR_WINDOW, PAIR_WIDEN, int(PAIR_ANYONE_S * 1000), process,
            LAST_OPPONENT_MS]


class RedisQueues:
    """See the module docstring. ``process``: this process's id (in the leases and keys)."""

    def __init__(self, client: RedisClient, process: str) -> None:
        self.client = client
        self.process = process
        self._sha: dict[str, str] = {}

    async def _script(self, name: str, body: str, args: list[Any]) -> Any:
        # Every key is under the one hash tag: the first names the slot for a cluster.
        keys = [QUEUES]
        sha = self._sha.get(name)
        if sha is None:
            sha = self._sha[name] = await self.client.script_load(body)
        try:
            return await self.client.evalsha(sha, len(keys), *keys, *args)
        except NoScriptError:
            self._sha[name] = await self.client.script_load(body)
            return await self.client.evalsha(self._sha[name], len(keys), *keys, *args)

    async def offer(self, seek: Seek, now: int) -> Offer:
        raw = await self._script("offer", OFFER, [*_rule_args(now, self.process),
                                                  json.dumps(asdict(seek)), QUEUE_CAP])
        out = json.loads(raw)
        if "barred" in out:
            return Offer(seek, barred_ms=int(out["barred"]))
        return Offer(_seek(out["seek"]),
                     _seek(out["match"]) if out.get("match") else None,
                     _seek(out["replaced"]) if out.get("replaced") else None,
                     full=bool(out.get("full")))

    async def pair_waiting(self, now: int) -> list[tuple[Seek, Seek]]:
        raw = await self._script("pass", PASS, _rule_args(now, self.process))
        seeks = [_seek(r) for r in raw]
        return list(zip(seeks[::2], seeks[1::2], strict=True))

    async def cancel(self, seek: Seek) -> bool:
        return bool(await self._script("cancel", CANCEL,
                                       [PREFIX, seek.id, seek.player, seek.queue]))

    async def confirm(self, seek: Seek) -> None:
        await self.client.hdel(MATCHED, seek.id)

    async def take_over(self, player: str, queue: str, process: str, conn: int,
                        new_id: str) -> tuple[Seek, Seek] | None:
        raw = await self._script("take_over", TAKE_OVER,
                                 [PREFIX, player, queue, process, conn, new_id])
        return None if raw is None else (_seek(raw[0]), _seek(raw[1]))

    async def give_back(self, seek: Seek) -> bool:
        return bool(await self._script("give_back", GIVE_BACK, [
            PREFIX, seek.id, json.dumps(asdict(seek)), seek.player, seek.queue]))

    async def no_show(self, queue: str, present: list[str], absent: list[str],
                      now: int) -> list[Seek]:
        raw = await self._script("no_show", NO_SHOW, [
            PREFIX, now, queue, BACK_AT_HEAD_S * 1000, NO_SHOW_PAUSE_S * 1000, len(present),
            *present, *absent])
        return [_seek(r) for r in raw]

    async def seated(self, players: list[str], race: str, now: int) -> None:
        until = now + SEAT_GRACE_S * 1000
        for player in players:
            await self.client.set(f"{PREFIX}seat:{player}", f"{race}\t{until}",
                                  px=SEAT_GRACE_S * 1000 + 60_000)

    async def seat_of(self, player: str, now: int) -> str | None:
        raw = await self.client.get(f"{PREFIX}seat:{player}")
        if raw is None:
            return None
        race, until = (raw.decode() if isinstance(raw, bytes) else raw).split("\t")
        return race if int(until) > now else None

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
                back += await self.give_back(seek)
            else:
                await self.confirm(seek)  # both gone: nobody to pair
        return back
