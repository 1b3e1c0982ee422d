"""The :class:`~solrace.store.base.Store` on Redis, shared by every server process.

Each race is a hash (settings, seed, salt, finished_at) and a list (its accepted actions, in
order) under its unit's hash tag (see :mod:`solrace.runtime.redis_connect`). One process at a time
*owns* a unit: it holds the unit's lease ``"pid:epoch"``, renews it, and is the only one that
runs the unit's rooms and writes its log. Every write is one Lua script per unit (the scripts
are in :mod:`solrace.store.redis_scripts`) that first checks the lease (a process that lost it
— paused, cut off — is *fenced*: its write fails, and it lets the unit go), so the log has one
order whoever writes it. A new race claims its unit in the same script that stores it.

Writes are group commits, as with SQLite: everything queued during one loop turn goes out in
one pipeline (one script per unit), and the callbacks run when Redis has answered. At most one
pipeline is in flight, so batches are durable in order. Redis acknowledges a write once it is
in its memory and its append-only file's buffer; with ``appendfsync everysec`` (the shipped
configuration) a crash of Redis itself can lose the last second (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisError, ResponseError

from solrace.core.race import Race
from solrace.core.race_parts import LogEntry
from solrace.core.tournament import TLogEntry
from solrace.core.units import Unit
from solrace.runtime.redis_connect import TO_SCORE, UNITS, RedisClient, key, pool_key, unit_of
from solrace.runtime.supervisor import Supervisor
from solrace.settings import FINISHED_TTL_DAYS, LEASE_MS, REDIS_TIMEOUT
from solrace.store.base import Callback, Failure, OnFailure, committed, failed
from solrace.store.records import (
    race_from_record,
    race_record,
    replay,
    tournament_from_record,
    tournament_record,
)
from solrace.store.redis_moderation import RedisModeration
from solrace.store.redis_players import RedisPlayers
from solrace.store.redis_scripts import ACQUIRE, COMMIT, RELEASE
from solrace.store.redis_wire import CommitLink

log = logging.getLogger(__name__)


@dataclass
class _UnitOps:
    keys: list[str] = field(default_factory=list)
    ops: list[Any] = field(default_factory=list)
    races: set[str] = field(default_factory=set)
    claim: bool = False
    entries: dict[str, list[bytes]] = field(default_factory=dict)  # log key -> new entries
    #: Log key -> its length before these entries (-1: not known, not checked).
    lengths: dict[str, int] = field(default_factory=dict)

    def args(self) -> list[Any]:
        """The operations, each race's new log entries first (in one msgpack array each,
        with the length the log must have before them)."""
        out: list[Any] = []
        for log_key, packed in self.entries.items():
            out += ["L", self.key_index(log_key), self.lengths[log_key],
                    msgpack.packb(packed, use_bin_type=False)]
        return out + self.ops

    def key_index(self, name: str) -> int:
        if name not in self.keys:
            self.keys.append(name)
        return self.keys.index(name) + 3  # after the lease and epoch keys


@dataclass
class _Batch:
    units: dict[str, _UnitOps] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    #: Races a player joined: the scoring sweep looks at them once they end.
    to_score: list[str] = field(default_factory=list)
    after: list[tuple[Callback, Failure | None]] = field(default_factory=list)
    done: asyncio.Future[None] | None = None


def _fields(race: Race) -> list[Any]:
    """A race's record as a Redis hash's field/value pairs (an empty field left out)."""
    return [x for name, value in race_record(race).items() if value is not None
            for x in (name, value)]


def _decode(entries: list[bytes], unit: str, shape: int) -> Iterator[list[Any]]:
    """The log entries as lists of ``shape`` values; an unreadable one is logged, skipped."""
    for n, raw in enumerate(entries):
        try:
            values = msgpack.unpackb(raw, raw=False)
            if len(values) != shape:
                raise ValueError(f"{len(values)} values")
        except Exception as exc:
            log.warning("%s: log entry %d skipped (%s)", unit, n, exc)
            continue
        yield values


def build(fields: dict[bytes, bytes], entries: list[bytes], race_id: str) -> Race:
    """A race rebuilt from its hash and log (blocking: run it in a thread)."""
    record = {k.decode(): v for k, v in fields.items()}
    race = race_from_record(race_id, record)
    log_entries = (LogEntry(race_id, at, kind, player, data)
                   for at, kind, player, data in _decode(entries, race_id, 4))
    finished = record.get("finished_at")
    return replay(race, log_entries, None if finished is None else int(finished))


#: The arenas by when they end (a sorted set; solrace.service.arena_schedule lists them).
ARENAS = "sr:arenas"


def build_tournament(fields: dict[bytes, bytes], entries: list[bytes], tid: str) -> Unit:
    """A tournament rebuilt from its hash and log (blocking: run it in a thread)."""
    record = {k.decode(): v for k, v in fields.items()}
    log_entries = (TLogEntry(tid, at, kind, data)
                   for at, kind, data in _decode(entries, tid, 3))
    return tournament_from_record(tid, record, log_entries)


class RedisStore:
    """Races and their logs in Redis (see the module docstring). ``pid`` names this process in
    the leases; ``on_lost(unit)`` is told when a write shows that another process owns a unit
    now."""

    def __init__(self, client: RedisClient, pid: str,
                 finished_ttl_ms: int = int(FINISHED_TTL_DAYS * 86400 * 1000),
                 writer: RedisClient | None = None, supervisor: Supervisor | None = None,
                 keeper: RedisClient | None = None) -> None:
        self.client = client
        #: The client of the leases' renewals and the owners' looks: connections of their own,
        #: so that a renewal never waits behind the service's other commands (a lease lasts
        #: 1.5 s).
        self.keeper = keeper if keeper is not None else client
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        #: The client commits go through: one that never sends a command again by itself
        #: (see :func:`solrace.runtime.redis_connect.connect`).
        self.writer = writer if writer is not None else client
        #: Where commits go on a single Redis server: a link of their own that writes RESP
        #: directly (solrace.store.redis_wire); None on a Redis Cluster or over TLS, where
        #: they go through ``writer``.
        self.link = (None if isinstance(self.writer, RedisCluster)
                     else CommitLink.of(self.writer, REDIS_TIMEOUT))
        self.pid = pid
        #: Each log's length once everything queued so far is written (log key -> entries),
        #: for the commit script's check; forgotten when a write fails (a rebuild reads it).
        self.lengths: dict[str, int] = {}
        self.finished_ttl_ms = finished_ttl_ms
        self.epochs: dict[str, int] = {}  # units this process owns -> epoch
        self.on_commit: Callable[[], None] | None = None
        self.on_failure: OnFailure | None = None
        self.on_lost: Callable[[str], None] | None = None
        self._healthy = True
        self._batch: _Batch | None = None
        self._writing: asyncio.Task[None] | None = None
        self._inflight: _Batch | None = None  # the batch being written
        self._sha: dict[str, str] = {}
        self.commits = 0

    # ---------------------------------------------------------------- scripts
    async def start(self) -> None:
        """Load the scripts (raises if Redis cannot be reached)."""
        await self._load_scripts()

    async def _load_scripts(self) -> None:
        for name, body in (("commit", COMMIT), ("acquire", ACQUIRE),
                           ("release", RELEASE)):
            self._sha[name] = await self.client.script_load(body)

    async def _script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.client.evalsha(self._sha[name], len(keys), *keys, *args)
        except NoScriptError:  # Redis restarted without its script cache
            await self._load_scripts()
            return await self.client.evalsha(self._sha[name], len(keys), *keys, *args)

    # ---------------------------------------------------------------- leases
    async def acquire(self, unit: str, dead: str | None = None) -> str | None:
        """Take ``unit`` if nobody holds it, or if the process ``dead`` does (it is gone, its
        lease not lapsed yet; its writes are fenced by the new epoch): None then (it is
        ours), else the holder's pid."""
        result = await self._script("acquire", [key(unit, "lease"), key(unit, "epoch")],
                                    [self.pid, LEASE_MS, dead or ""])
        if isinstance(result, int):
            self.epochs[unit] = result
            return None
        holder = result.decode() if isinstance(result, bytes) else str(result)
        pid, _, epoch = holder.rpartition(":")
        if pid == self.pid:  # ours already (a retry after a lost answer)
            self.epochs[unit] = int(epoch)
            return None
        return pid

    async def holder(self, unit: str) -> str | None:
        """The pid of the process that owns ``unit`` now, or None."""
        return (await self.holders([unit]))[unit]

    async def holders(self, units: list[str]) -> dict[str, str | None]:
        """The pid that owns each unit now (None: nobody), in one round trip (one ``MGET``;
        on a Redis Cluster, one pipeline split by node)."""
        if not units:
            return {}
        names = [key(u, "lease") for u in units]
        if isinstance(self.keeper, RedisCluster):
            values = await self.keeper.mget_nonatomic(names)
        else:
            values = await self.keeper.mget(names)
        out: dict[str, str | None] = {}
        for unit, value in zip(units, values, strict=True):
            if value is None:
                out[unit] = None
            else:
                text = value.decode() if isinstance(value, bytes) else str(value)
                out[unit] = text.rpartition(":")[0]
        return out

    async def release(self, unit: str) -> None:
        epoch = self.epochs.pop(unit, None)
        if epoch is not None:
            await self._script("release", [key(unit, "lease")], [f"{self.pid}:{epoch}"])

    def owns(self, unit: str) -> bool:
        return unit in self.epochs

    # ------------------------------------------------------------------ writes
    @property
    def healthy(self) -> bool:
        return self._healthy

    def unreachable(self) -> None:
        """Redis did not answer (a renewal, a publish): no write is taken until a probe
        goes through."""
        self._healthy = False

    def _current(self) -> _Batch:
        if self._batch is None:
            self._batch = _Batch()
            loop = asyncio.get_running_loop()
            self._batch.done = loop.create_future()
            loop.call_soon(self._end_of_turn)
        return self._batch

    def _unit(self, race: str) -> _UnitOps:
        batch = self._current()
        unit = unit_of(race)
        ops = batch.units.get(unit)
        if ops is None:
            ops = batch.units[unit] = _UnitOps()
        ops.races.add(race)
        return ops

    def add_race(self, race: Race) -> None:
        ops = self._unit(race.race)
        if not self.owns(unit_of(race.race)):
            ops.claim = True
        values = _fields(race)
        ops.ops += ["H", ops.key_index(key(unit_of(race.race), f"r:{race.race}")),
                    len(values) // 2, *values]
        self.lengths[key(unit_of(race.race), f"log:{race.race}")] = 0
        self._current().created.append(unit_of(race.race))

    def append(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        race = entries[0].race
        ops = self._unit(race)
        log_key = key(unit_of(race), f"log:{race}")
        packed = [msgpack.packb([e.at, e.kind, e.player, e.data]) for e in entries]
        self._extend(ops, log_key, packed)
        for e in entries:
            if e.kind == "join" and "id" in e.data:
                self._current().to_score.append(race)

    def _extend(self, ops: _UnitOps, log_key: str, packed: list[bytes]) -> None:
        """Queue entries for a log, with the length it must have before the first of them."""
        if log_key not in ops.entries:
            ops.entries[log_key] = []
            ops.lengths[log_key] = self.lengths.get(log_key, -1)
        ops.entries[log_key].extend(packed)
        if log_key in self.lengths:
            self.lengths[log_key] += len(packed)

    def publish(self, race: str, message: bytes) -> None:
        """Publish ``message`` on the race's unit channel in the script that writes this
        batch: the other processes hear of it exactly when it is durable."""
        ops = self._unit(race)
        unit = unit_of(race)
        channel, stream = ops.key_index(key(unit, "ev")), ops.key_index(key(unit, "evs"))
        ops.ops += ["P", channel, stream, message]

    # ------------------------------------------------------------ tournaments
    def add_tournament(self, t: Unit) -> None:
        ops = self._unit(t.tid)
        if not self.owns(t.tid):
            ops.claim = True
        values = [x for pair in tournament_record(t).items() for x in pair]
        ops.ops += ["H", ops.key_index(key(t.tid, "t")), len(values) // 2, *values]
        self.lengths[key(t.tid, "tlog")] = 0
        self._current().created.append(t.tid)

    def append_tournament(self, entries: list[TLogEntry]) -> None:
        if not entries:
            return
        tid = entries[0].tournament
        ops = self._unit(tid)
        packed = [msgpack.packb([e.at, e.kind, e.data]) for e in entries]
        self._extend(ops, key(tid, "tlog"), packed)

    def mark_tournament_finished(self, tid: str, at: int) -> None:
        ops = self._unit(tid)
        ops.ops += ["H", ops.key_index(key(tid, "t")), 1, "finished_at", at]
        for name in ("t", "tlog", "epoch"):
            ops.ops += ["X", ops.key_index(key(tid, name)), self.finished_ttl_ms]
        self._current().finished.append(tid)

    async def load_tournament(self, tid: str) -> Unit | None:
        owned = self.owns(tid)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(key(tid, "t"))
            pipe.lrange(key(tid, "tlog"), 0, -1)
            fields, entries = await pipe.execute()
        if not fields:
            return None
        self._read_length(tid, key(tid, "tlog"), len(entries), owned)
        return await asyncio.to_thread(build_tournament, fields, entries, tid)

    async def index_arena(self, aid: str, ends_at: int) -> None:
        await self.client.zadd(ARENAS, {aid: ends_at})

    async def arena_ids(self, ended_after: int) -> list[str]:
        # Arenas that ended a while ago leave the index as it is read (it stays small).
        await self.client.zremrangebyscore(ARENAS, "-inf", ended_after - 1)
        return [m.decode() if isinstance(m, bytes) else str(m)
                for m in await self.client.zrangebyscore(ARENAS, ended_after, "+inf")]

    async def startup_tournaments(self) -> list[Unit]:
        return []  # shared by several processes: taken on demand (solrace.cluster)

    def mark_finished(self, race: str, at: int) -> None:
        ops = self._unit(race)
        unit = unit_of(race)
        ops.ops += ["H", ops.key_index(key(unit, f"r:{race}")), 1, "finished_at", at]
        for name in (f"r:{race}", f"log:{race}", "epoch"):
            ops.ops += ["X", ops.key_index(key(unit, name)), self.finished_ttl_ms]
        if unit == race:
            # The stream only serves processes catching up on a live race.
            ops.ops += ["X", ops.key_index(key(unit, "evs")), 60_000]
            self._current().finished.append(unit)

    def pending(self) -> bool:
        return self._batch is not None

    def after_commit(self, ok: Callback, fail: Failure | None = None) -> None:
        if self._batch is None and self._writing is None:
            ok()
        else:
            self._current().after.append((ok, fail))

    def flushed(self) -> asyncio.Future[None]:
        batch = self._batch if self._batch is not None else self._inflight
        if batch is None or batch.done is None:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            fut.set_result(None)
            return fut
        return asyncio.shield(batch.done)

    def send_now(self) -> None:
        """With nothing in flight on the commit link, write the batch now (see
        ``_end_of_turn``); what the rest of the turn queues goes in the next batch."""
        if self._writing is None and self._batch is not None and self.link is not None \
                and self.link.open:
            self._end_of_turn()

    def _end_of_turn(self) -> None:
        """The turn that queued a batch is over: write it. On the commit link (a single Redis
        server) it is written right here, before any task wakes up to wait for its replies:
        at a person's pace that is on every move's way to the other processes' spectators."""
        if self._writing is not None or self._batch is None:
            return  # in flight (the task writes what comes after), or sent by send_now
        sent: tuple[_Batch, list[tuple[str, _UnitOps]], int] | None = None
        batch = self._batch
        if self.link is not None and self.link.open:
            units = list(batch.units.items())
            try:
                count = self.link.send(self._commands(batch, units))
            except Exception:  # not encodable (a bug): the task's write fails it, as always
                log.exception("a batch could not be sent at the end of its turn")
            else:
                self._batch, self._inflight = None, batch
                sent = batch, units, count
        self._writing = self.supervisor.spawn(self._write_batches(sent), "write to Redis")

    def commit(self) -> None:
        """Nothing to do at once: batches go out from the event loop (see ``_end_of_turn``)."""

    async def _write_batches(
            self, sent: tuple[_Batch, list[tuple[str, _UnitOps]], int] | None = None) -> None:
        """Write the batches one after the other (the first one already ``sent``, maybe).
        When one fails, the batch collected while it was in flight fails too, unsent: it was
        worked out on top of the failed one (a move after a move that is not written; a
        repeated ``seq`` answered from a move that is not written)."""
        try:
            while sent is not None or self._batch is not None:
                if sent is not None:
                    batch, units, count = sent
                    sent = None
                else:
                    assert self._batch is not None
                    batch, self._batch = self._batch, None
                    units, count = list(batch.units.items()), 0
                self._inflight = batch
                error = await self._write(batch, units, count)
                self._inflight = None
                if error is not None and self._batch is not None:
                    after, self._batch = self._batch, None
                    self._failed(after, error, set(after.units))
        finally:
            self._writing = None
            self._inflight = None

    def _commands(self, batch: _Batch, units: list[tuple[str, _UnitOps]]) -> list[list[Any]]:
        """A batch's commands on a single Redis server: a commit script per unit, then the
        index updates."""
        commands: list[list[Any]] = []
        for unit, ops in units:
            epoch = "" if ops.claim else str(self.epochs.get(unit, ""))
            args = ops.args()  # first: it names the keys it uses
            keys = [key(unit, "lease"), key(unit, "epoch"), *ops.keys]
            commands.append(["EVALSHA", self._sha["commit"], len(keys), *keys, self.pid, epoch,
                             LEASE_MS, *args])
        for unit in batch.created:
            commands.append(["SADD", UNITS, unit])
        for unit in batch.finished:
            commands.append(["SREM", UNITS, unit])
        if batch.to_score:
            commands.append(["SADD", TO_SCORE, *batch.to_score])
        return commands

    async def _send(self, batch: _Batch, units: list[tuple[str, _UnitOps]],
                    sent: int = 0) -> list[Any]:
        """The replies of a batch's commands: those ``sent`` on the link already, or sent
        now."""
        if sent:
            assert self.link is not None
            return await self.link.receive(sent)
        if isinstance(self.writer, RedisCluster):
            # A cluster pipeline cannot run scripts: send them side by side (each to the node
            # of its unit's slot), then the index updates.
            calls: list[Any] = []
            for unit, ops in units:
                epoch = "" if ops.claim else str(self.epochs.get(unit, ""))
                args = ops.args()
                keys = [key(unit, "lease"), key(unit, "epoch"), *ops.keys]
                calls.append(self.writer.evalsha(self._sha["commit"], len(keys), *keys,
                                                 self.pid, epoch, LEASE_MS, *args))
            for unit in batch.created:
                calls.append(self.writer.sadd(UNITS, unit))
            for unit in batch.finished:
                calls.append(self.writer.srem(UNITS, unit))
            if batch.to_score:
                calls.append(self.writer.sadd(TO_SCORE, *batch.to_score))
            return list(await asyncio.gather(*calls, return_exceptions=True))
        commands = self._commands(batch, units)
        if self.link is not None:
            return await self.link.call(commands)
        async with self.writer.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute(raise_on_error=False))

    async def _write(self, batch: _Batch, units: list[tuple[str, _UnitOps]],
                     sent: int = 0) -> BaseException | None:
        """Write one batch (``sent``: its commands are on the link already); the error if it
        failed (its callbacks have failed then)."""
        try:
            results = await self._send(batch, units, sent)
            if any(isinstance(r, NoScriptError) for r in results):
                # Redis restarted without its script cache: nothing ran, send it again.
                await self._load_scripts()
                results = await self._send(batch, units)
        except Exception as exc:  # Redis's, or a batch that cannot be encoded: it fails
            self._failed(batch, exc, set(batch.units))
            return exc
        errors: dict[str, BaseException] = {}
        for (unit, _ops), result in zip(units, results, strict=False):
            if isinstance(result, BaseException):
                errors[unit] = result
            elif isinstance(result, int) and result > 0:
                self.epochs[unit] = result  # claimed with this race
        if errors:
            for unit, error in errors.items():
                if isinstance(error, ResponseError) and (
                        "FENCED" in str(error) or "TAKEN" in str(error)):
                    self.epochs.pop(unit, None)
                    if self.on_lost is not None:
                        self.on_lost(unit)
            error = next(iter(errors.values()))
            self._failed(batch, error, set(errors))
            return error
        self._healthy = True
        self.commits += 1
        committed(batch.done, batch.after, self.on_commit)
        return None

    def _failed(self, batch: _Batch, exc: BaseException, units: set[str]) -> None:
        """Nothing of ``batch`` may be shown: its callbacks fail, and every race it touched is
        rebuilt from what Redis holds (writes of other units that did go through are then
        part of it)."""
        log.error("Redis write failed (%d units): %s", len(batch.units), exc)
        if not isinstance(exc, ResponseError):
            self._healthy = False
        for ops in batch.units.values():  # how long these logs are now: a rebuild reads it
            for log_key in ops.entries:
                self.lengths.pop(log_key, None)
        failed(batch.done, batch.after, exc)
        races = {r for ops in batch.units.values() for r in ops.races}
        if self.on_failure is not None and races:
            self.on_failure(races, exc)

    async def probe(self) -> bool:
        try:
            await self.client.set("sr:probe", str(time.time()), px=60_000)
            if not self._sha:
                await self._load_scripts()
        except RedisError as exc:
            log.warning("Redis still unreachable: %s", exc)
            self._healthy = False
            return False
        self._healthy = True
        return True

    # ----------------------------------------------------------------- players
    def players(self) -> RedisPlayers:
        """The players, in the same Redis (solrace.store.redis_players)."""
        return RedisPlayers(self.client)

    def moderation(self) -> RedisModeration:
        """Fair play, kept with the players (solrace.store.redis_moderation)."""
        return RedisModeration(self.client)

    # -------------------------------------------------------------------- pool
    async def pool_put(self, game: str, entries: list[str]) -> None:
        if entries:
            await self.client.rpush(pool_key(game), *(e.encode() for e in entries))

    async def pool_take(self, game: str, n: int) -> list[str]:
        # LPOP with a count is one command: two processes never get the same deal. An entry
        # of another format (a clear-text deal of an older version) comes back as text the
        # pool cannot open, and is dropped there.
        raw = await self.client.lpop(pool_key(game), n) or []
        return [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
                for item in raw]

    async def pool_size(self, game: str) -> int:
        return int(await self.client.llen(pool_key(game)))

    # ------------------------------------------------------------------- reads
    async def load(self, race_id: str) -> Race | None:
        unit = unit_of(race_id)
        owned = self.owns(unit)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(key(unit, f"r:{race_id}"))
            pipe.lrange(key(unit, f"log:{race_id}"), 0, -1)
            fields, entries = await pipe.execute()
        if not fields:
            return None
        self._read_length(unit, key(unit, f"log:{race_id}"), len(entries), owned)
        return await asyncio.to_thread(build, fields, entries, race_id)

    def _read_length(self, unit: str, log_key: str, length: int, owned: bool) -> None:
        """A log read whole: its length is what this process's next write of it checks —
        only when the unit was this process's before the read began, and never lowered. A
        copy read while another process ran it may be shorter than the log is by now (and may
        come back after a fresh read made since the unit was taken): its length would fail
        that write (CONFLICT), and with it the whole batch of the unit (an arena: its table
        and every race of it written in that turn, all rebuilt)."""
        if owned and self.owns(unit) and length >= self.lengths.get(log_key, 0):
            # A log only grows: a read shorter than what this process has queued of it began
            # before its last writes (a second load while the first was being adopted).
            self.lengths[log_key] = length

    async def startup_races(self) -> list[Race]:
        return []  # shared by several processes: taken on demand (solrace.cluster)

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
