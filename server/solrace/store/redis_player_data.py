"""How the players' records lie in Redis, and the one script that changes them: the key names
of :mod:`solrace.store.redis_players` and :mod:`solrace.store.redis_moderation` (one place for
both: a score writes keys that moderation reads), a result's stored form, and ``APPLY``.

Every key has the hash tag ``{pl}``: a score, a clear or a close changes several players in one
script, which a Redis Cluster only runs on keys of one slot. Keys::

    sr:{pl}:p:ID            hash: name, created_at, password
    sr:{pl}:name:KEY        the id of the player named KEY (the folded name; SET NX claims it)
    sr:{pl}:key:HASH        the id of the player one of whose browser keys hashes to HASH
    sr:{pl}:t:HASH          a sign-in ticket: "player-id expires-at" (cleared after an hour)
    sr:{pl}:r:ID            hash: game -> msgpack [mu, sigma, races]
    sr:{pl}:res:ID          list: the ids of the races of his results, newest first (capped at
                            STATS_RESULTS; entries from before fair play are whole results)
    sr:{pl}:rh:ID           hash: race -> his result there (msgpack map of Result.as_dict() and
                            ``cleared``): the one copy a clear or a close changes
    sr:{pl}:lb:GAME         sorted set: rated players of GAME by mu (never a closed account)
    sr:{pl}:scored          hash: race -> the ``ratings`` body (JSON) of every scored race
    sr:{pl}:toscore         set: races a player joined, not scored yet (TO_SCORE, named in
                            solrace.runtime.redis_connect: the race store fills it)
    sr:{pl}:held            hash: race -> msgpack [game, held_entries] of a held race
    sr:{pl}:flagged         sorted set: "RACE|ID" of flagged results not cleared, by suspicion
    sr:{pl}:pair:A:B        sorted set: rated races of players A < B together, by finish time
                            (members older than REPEAT_WINDOW_MS trimmed; expires after it)
    sr:{pl}:wo:ID           sorted set: races he walked out of, by finish time (the same, over
                            WALKOUT_WINDOW_MS)
    sr:{pl}:roles           hash: player id -> role
    sr:{pl}:closures        hash: player id -> msgpack [at, by, reason] of a closed account
    sr:{pl}:refunds         hash: "RACE|ID" -> msgpack [points, at]: ID got his points back
    sr:{pl}:daily:GAME:DAY  "seed salt" of the day's deal (SET NX: the first one drawn)
    sr:{pl}:att:GAME:DAY    hash: player id -> his attempt's race
    sr:{pl}:look:GAME:DAY   hash: player id -> "NET AT": where and when he opened it
    sr:{pl}:dr:GAME:DAY     hash: "RACE|ID" -> the day's results (as in rh:ID, kept the same)
    sr:{pl}:days:ID:GAME    set: the days he played GAME's daily deal to its end (not aborted)

``APPLY`` is the compare-and-set every write of these records goes through: the caller reads
what it needs, works the change out in Python (ratings, refunds) and sends the script its
*checks* — each value it read, which must still be as it was, else the script writes nothing
and answers ``CONFLICT`` (:class:`Conflict`: read again) — then its *writes*, done only once
every check passed. So a score, a clear and a close of the same players, from any processes,
never overwrite each other's changes.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import MISSING, fields
from typing import Any

import msgpack
from redis.exceptions import NoScriptError, ResponseError

from solrace.core.rating import Rating
from solrace.core.scoring import Result
from solrace.runtime.redis_connect import RedisClient


def pkey(name: str) -> str:
    return f"sr:{{pl}}:{name}"


SCORED = pkey("scored")
HELD = pkey("held")
FLAGGED = pkey("flagged")
ROLES = pkey("roles")
CLOSURES = pkey("closures")
REFUNDS = pkey("refunds")


def player_key(pid: str) -> str:
    return pkey(f"p:{pid}")


def ratings_key(pid: str) -> str:
    return pkey(f"r:{pid}")


def history_key(pid: str) -> str:
    return pkey(f"res:{pid}")


def results_key(pid: str) -> str:
    return pkey(f"rh:{pid}")


def board_key(game: str) -> str:
    return pkey(f"lb:{game}")


def pair_key(a: str, b: str) -> str:
    a, b = sorted((a, b))
    return pkey(f"pair:{a}:{b}")


def walkouts_key(pid: str) -> str:
    return pkey(f"wo:{pid}")


def day_results_key(game: str, day: str) -> str:
    return pkey(f"dr:{game}:{day}")


def days_key(pid: str, game: str) -> str:
    return pkey(f"days:{pid}:{game}")


def of(race: str, pid: str) -> str:
    """The member naming one player's result in a race (race and player ids have no ``|``)."""
    return f"{race}|{pid}"


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def data(value: bytes | str) -> bytes:
    """A stored value as the client gives it (bytes: it never decodes answers)."""
    assert isinstance(value, bytes), "the Redis client must not decode answers"
    return value


# ----------------------------------------------------------------------------- records
def pack_rating(r: Rating) -> bytes:
    return bytes(msgpack.packb([r.mu, r.sigma, r.races]))


def unpack_rating(raw: bytes | str) -> Rating:
    mu, sigma, races = msgpack.unpackb(data(raw))
    return Rating(mu, sigma, races)


#: A stored result's fields and their defaults, for rows written before a field existed.
_DEFAULTS = {f.name: f.default for f in fields(Result) if f.default is not MISSING}


def result_row(r: Result) -> dict[str, Any]:
    """A new result as stored: :meth:`Result.as_dict` and ``cleared``."""
    return {**r.as_dict(), "cleared": False}


def pack_row(row: dict[str, Any]) -> bytes:
    return bytes(msgpack.packb(row))


def unpack_row(raw: bytes | str) -> dict[str, Any]:
    """A stored result as :meth:`Result.as_dict` gives it, with ``cleared``; a field written
    before it existed gets its default."""
    row: dict[str, Any] = msgpack.unpackb(data(raw), raw=False)
    if "cleared" not in row:  # written before fair play (a new row has every field)
        for name, default in _DEFAULTS.items():
            row.setdefault(name, default)
        row["cleared"] = False
        row["delta"] = (None if row["after"] is None or row["before"] is None
                        else row["after"] - row["before"])
    return row


def rated_row(row: dict[str, Any], before: Rating, after: Rating) -> dict[str, Any]:
    """A held result once its race's ratings are applied."""
    return {**row, "rated": True, "held": False, "before": before.shown, "after": after.shown,
            "deviation": round(after.sigma), "delta": after.shown - before.shown}


def is_ref(entry: bytes) -> bool:
    """Is an entry of a player's ``res:`` list a race id (else a whole result, as stored
    before fair play: a msgpack map, whose first byte is not ASCII)?"""
    return entry[:1] < b"\x80"


async def stored_ratings(client: RedisClient, wanted: list[tuple[str, str]]
                         ) -> list[bytes | None]:
    """The stored ratings (player id, game) as they are (None: none yet), in one round trip:
    what :meth:`Ops.same` checks and :func:`unpack_rating` reads."""
    if not wanted:
        return []
    async with client.pipeline(transaction=False) as pipe:
        for pid, game in wanted:
            pipe.hget(ratings_key(pid), game)
        return [None if raw is None else data(raw) for raw in await pipe.execute()]


async def stored_results(client: RedisClient, wanted: list[tuple[str, str]]
                         ) -> list[bytes | None]:
    """The stored results (player id, race) as they are (None: none), in one round trip."""
    if not wanted:
        return []
    async with client.pipeline(transaction=False) as pipe:
        for pid, race in wanted:
            pipe.hget(results_key(pid), race)
        return [None if raw is None else data(raw) for raw in await pipe.execute()]


async def history(client: RedisClient, pid: str, limit: int
                  ) -> list[tuple[bytes | None, dict[str, Any]]]:
    """The player's latest results, newest first, each with its stored bytes in ``rh:`` (None
    for a result stored before fair play, which no clear or close changes)."""
    entries = [data(e) for e in await client.lrange(history_key(pid), 0, limit - 1)]
    refs = [e for e in entries if is_ref(e)]
    stored = await client.hmget(results_key(pid), refs) if refs else []
    by_race = {ref: None if raw is None else data(raw)
               for ref, raw in zip(refs, stored, strict=True)}
    out: list[tuple[bytes | None, dict[str, Any]]] = []
    for entry in entries:
        if not is_ref(entry):
            out.append((None, unpack_row(entry)))
        else:
            raw = by_race[entry]
            if raw is not None:  # else it fell off the list meanwhile
                out.append((raw, unpack_row(raw)))
    return out


# ------------------------------------------------------------------------------- APPLY
#: KEYS: every key the operation reads or writes. ARGV: operations, each a letter and its
#: arguments (a key argument is an index into KEYS, "0" for none). Checks, all made before any
#: write: 'Q' key field (done already if the field exists: return 0), 'E' key field value (the
#: hash field must hold value, "" if absent), 'I' key value (the list's first entry must be
#: value, "" if empty). Writes: 'H' key field value (HSET), 'D' key field (HDEL), 'Z' key score
#: member guard (ZADD, unless the member is a field of the guard hash), 'z' key member (ZREM),
#: 'S'/'s' key member (SADD/SREM), 'P' list race cap results flagged pid (a player's new
#: result: LPUSH race, and the results that fall off the capped list leave his ``rh:`` hash
#: and the flagged set), 'W' key score member since ttl (ZADD, drop members scored below since,
#: PEXPIRE ttl ms). 1 when written, 0 if a 'Q' found it done, or the error CONFLICT.
APPLY = """
local arity = {Q = 2, E = 3, I = 2, H = 3, D = 2, Z = 4, z = 2, S = 2, s = 2, P = 6, W = 5}
local function key(i) return KEYS[tonumber(ARGV[i])] end
local i = 1
while i <= #ARGV do
  local op = ARGV[i]
  if arity[op] == nil then return redis.error_reply('BADOP ' .. op) end
  if op == 'Q' then
    if redis.call('HEXISTS', key(i + 1), ARGV[i + 2]) == 1 then return 0 end
  elseif op == 'E' then
    if (redis.call('HGET', key(i + 1), ARGV[i + 2]) or '') ~= ARGV[i + 3] then
      return redis.error_reply('CONFLICT')
    end
  elseif op == 'I' then
    if (redis.call('LINDEX', key(i + 1), 0) or '') ~= ARGV[i + 2] then
      return redis.error_reply('CONFLICT')
    end
  end
  i = i + 1 + arity[op]
end
i = 1
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'H' then
    redis.call('HSET', key(i + 1), ARGV[i + 2], ARGV[i + 3])
  elseif op == 'D' then
    redis.call('HDEL', key(i + 1), ARGV[i + 2])
  elseif op == 'Z' then
    if ARGV[i + 4] == '0' or redis.call('HEXISTS', key(i + 4), ARGV[i + 3]) == 0 then
      redis.call('ZADD', key(i + 1), ARGV[i + 2], ARGV[i + 3])
    end
  elseif op == 'z' then
    redis.call('ZREM', key(i + 1), ARGV[i + 2])
  elseif op == 'S' then
    redis.call('SADD', key(i + 1), ARGV[i + 2])
  elseif op == 's' then
    redis.call('SREM', key(i + 1), ARGV[i + 2])
  elseif op == 'P' then
    local list, cap = key(i + 1), tonumber(ARGV[i + 3])
    redis.call('LPUSH', list, ARGV[i + 2])
    local gone = redis.call('LRANGE', list, cap, -1)
    if #gone > 0 then
      redis.call('LTRIM', list, 0, cap - 1)
      for _, race in ipairs(gone) do
        redis.call('HDEL', key(i + 4), race)
        redis.call('ZREM', key(i + 5), race .. '|' .. ARGV[i + 6])
      end
    end
  elseif op == 'W' then
    local k = key(i + 1)
    redis.call('ZADD', k, ARGV[i + 2], ARGV[i + 3])
    redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. ARGV[i + 4])
    redis.call('PEXPIRE', k, ARGV[i + 5])
  end
  i = i + 1 + arity[op]
end
return 1
"""


@functools.cache
def _sha(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


class Conflict(Exception):
    """A value an operation read changed before its script ran: nothing was written; read
    again."""


class Ops:
    """One ``APPLY``: its keys and operations, checks and writes in any order (the script makes
    every check first)."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.args: list[Any] = []
        self._index: dict[str, int] = {}

    def _k(self, name: str) -> int:
        index = self._index.get(name)
        if index is None:
            self.keys.append(name)
            index = self._index[name] = len(self.keys)
        return index

    # checks
    def done_if(self, key: str, field: str) -> None:
        """Nothing to do (the script answers 0) if the hash has this field."""
        self.args += ["Q", self._k(key), field]

    def same(self, key: str, field: str, value: bytes | str | None) -> None:
        """The hash field must still hold ``value`` (None: must still be absent)."""
        self.args += ["E", self._k(key), field, b"" if value is None else value]

    def head(self, key: str, value: bytes | None) -> None:
        """The list's first entry must still be ``value`` (None: the list must be empty)."""
        self.args += ["I", self._k(key), b"" if value is None else value]

    # writes
    def hset(self, key: str, field: str, value: bytes | str) -> None:
        self.args += ["H", self._k(key), field, value]

    def hdel(self, key: str, field: str) -> None:
        self.args += ["D", self._k(key), field]

    def zadd(self, key: str, score: float, member: str, unless_in: str | None = None) -> None:
        """Add (or move) ``member``, unless it is a field of the hash ``unless_in``."""
        guard = 0 if unless_in is None else self._k(unless_in)
        self.args += ["Z", self._k(key), score, member, guard]

    def zrem(self, key: str, member: str) -> None:
        self.args += ["z", self._k(key), member]

    def sadd(self, key: str, member: str) -> None:
        self.args += ["S", self._k(key), member]

    def srem(self, key: str, member: str) -> None:
        self.args += ["s", self._k(key), member]

    def push_result(self, pid: str, race: str, cap: int) -> None:
        """Put ``race`` first in the player's history; what falls off its ``cap`` leaves his
        results and the flagged set."""
        self.args += ["P", self._k(history_key(pid)), race, cap, self._k(results_key(pid)),
                      self._k(FLAGGED), pid]

    def recent(self, key: str, at: int, member: str, window_ms: int, now: int) -> None:
        """Add ``member`` at ``at`` to a sorted set of the last ``window_ms`` (before ``now``):
        older members go, and the set expires once a window passes without a write."""
        self.args += ["W", self._k(key), at, member, now - window_ms, window_ms]


class Scripts:
    """Scripts run by their SHA (worked out here: no round trip to load one), loaded when Redis
    does not know it (a restart empties its script cache)."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def run(self, body: str, keys: list[str], args: list[Any]) -> Any:
        sha = _sha(body)
        try:
            return await self.client.evalsha(sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.client.script_load(body)
            return await self.client.evalsha(sha, len(keys), *keys, *args)

    async def apply(self, ops: Ops) -> bool:
        """Run ``ops``: True if written, False if a :meth:`Ops.done_if` found it done; raises
        :class:`Conflict` if a value checked had changed."""
        try:
            done = await self.run(APPLY, ops.keys, ops.args)
        except ResponseError as exc:
            if "CONFLICT" in str(exc):
                raise Conflict from exc
            raise
        return bool(done)
