"""The Lua scripts the Redis store runs, each one atomic in Redis: a unit's batch written
under its lease (``COMMIT``: claim or check the lease, check the logs' lengths, then write and
publish; idempotent when sent again), and the lease's life: taken (``ACQUIRE``), renewed
(``RENEW``, by :mod:`solrace.cluster.keeper`'s thread) and let go (``RELEASE``).

A lease is the string ``"pid:epoch"`` under the unit's ``lease`` key, with a time to live; the
unit's ``epoch`` key counts its owners, so that a writer that lost its lease is *fenced*: the
holder it names is no longer there. :mod:`solrace.store.redis_store` queues the operations and
sends these scripts; the keys they touch are named in :mod:`solrace.runtime.redis_connect`.
"""

#: Write one unit's batch: claim the unit (a new race) or check the lease, check that every
#: log is as long as the writer thinks, then apply the operations. KEYS: lease, epoch, then the
#: data keys. ARGV: pid, epoch ('' to claim), lease ms, then operations: 'H' key# n field value
#: ... (HSET), 'L' key# length entries (RPUSH the entries of a msgpack array onto a list that
#: holds ``length`` entries; -1: unchecked), 'X' key# ms (PEXPIRE), 'P' channel# stream#
#: message (SPUBLISH to the other processes, and XADD to the unit's capped stream).
#:
#: Idempotent: a script that already ran (sent again after a timeout, say) finds its last
#: entries already at the end of the first log it writes, and does nothing (it answers the
#: claimed epoch, or 0, as the first time). A log of any other length means the writer's
#: picture is wrong (a write it took for failed went through after all): nothing is written
#: ('CONFLICT'), and the writer rebuilds the unit's races from what the log holds.
COMMIT = """
local holder
local claimed = 0
if ARGV[2] == '' then
  local current = redis.call('GET', KEYS[1])
  if current then
    local pid, epoch = string.match(current, '^(.*):(%d+)$')
    if pid ~= ARGV[1] then return redis.error_reply('TAKEN') end
    claimed = tonumber(epoch)  -- ours: this very claim, sent again
    holder = current
  else
    claimed = redis.call('INCR', KEYS[2])
    holder = ARGV[1] .. ':' .. claimed
    redis.call('SET', KEYS[1], holder, 'PX', ARGV[3])
  end
else
  holder = ARGV[1] .. ':' .. ARGV[2]
  if redis.call('GET', KEYS[1]) ~= holder then return redis.error_reply('FENCED') end
end
local i = 4
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'L' then
    local k, want = KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 2])
    if want >= 0 then
      local have = redis.call('LLEN', k)
      if have ~= want then
        local entries = cmsgpack.unpack(ARGV[i + 3])
        if have == want + #entries and redis.call('LINDEX', k, -1) == entries[#entries] then
          return claimed
        end
        return redis.error_reply('CONFLICT ' .. k .. ' holds ' .. have .. ', not ' .. want)
      end
    end
    i = i + 4
  elseif op == 'H' then
    i = i + 3 + 2 * tonumber(ARGV[i + 2])
  elseif op == 'P' then
    i = i + 4
  else
    i = i + 3
  end
end
i = 4
while i <= #ARGV do
  local op, k, n = ARGV[i], KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 2])
  if op == 'H' then
    redis.call('HSET', k, unpack(ARGV, i + 3, i + 2 + 2 * n))
    i = i + 3 + 2 * n
  elseif op == 'L' then
    local entries = cmsgpack.unpack(ARGV[i + 3])
    for j = 1, #entries, 1000 do
      redis.call('RPUSH', k, unpack(entries, j, math.min(j + 999, #entries)))
    end
    i = i + 4
  elseif op == 'P' then
    redis.call('SPUBLISH', k, ARGV[i + 3])
    redis.call('XADD', KEYS[n], 'MAXLEN', '~', 500, '*', 'm', ARGV[i + 3])
    i = i + 4
  else
    redis.call('PEXPIRE', k, n)
    i = i + 3
  end
end
return claimed
"""

#: Take a unit whose lease has lapsed, or whose holder is the process ARGV[3] (known to be
#: dead: solrace.cluster.deaths; '' for none): the new epoch, or the holder that has it.
ACQUIRE = """
local holder = redis.call('GET', KEYS[1])
if holder and (ARGV[3] == '' or string.sub(holder, 1, #ARGV[3] + 1) ~= ARGV[3] .. ':') then
  return holder
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. epoch, 'PX', ARGV[2])
return epoch
"""

#: Renew a lease still held by this holder: 1, else 0 (run by solrace.cluster.keeper).
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

#: Let a unit go (its races are over, or the process stops).
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
