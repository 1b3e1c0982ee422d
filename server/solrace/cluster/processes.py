"""Several server processes on one Redis: each race runs in one process, reachable from all.

A *unit* (a race; later a tournament with its races) is owned by one process at a time, which
holds its lease in Redis (``solrace.store.redis_store``) and runs its rooms exactly as the embedded
server does: commands, commit-then-emit, timers, views. Any process accepts any client:

- a command for a unit this process owns goes to its hub, as in the embedded server;
- a command for a unit nobody owns (its owner died or stopped, or it is new here) makes this
  process take the unit: it acquires the lease, rebuilds the races from their logs, and runs
  them — race-level transitions then happen in that one process, exactly once (the log is
  fenced by the lease's epoch);
- a command for a unit another process owns is forwarded to that process's inbox (Redis
  sharded pub/sub) with what the connection is in that unit (racers it speaks for, seats,
  races followed); the owner runs it for a :class:`~solrace.cluster.remote.RemoteSession`
  and sends back the replies and what the connection became (bound to a racer, following a
  race), which this process applies to the real connection. Events reach every process that
  follows the unit over the unit's channel (``solrace.bus.redis_bus``).

Liveness: each process renews its leases and an ``alive`` key; when a process dies its leases
lapse within ``LEASE_MS``, but Redis drops its inbox's link the moment it dies, so the processes
that still have clients on its units take them over within a few tenths of a second (the
janitor looks every ``JANITOR_EVERY`` seconds; :mod:`solrace.cluster.deaths`), its clients
reconnect elsewhere and resume with their tokens. A command forwarded to a process that does
not answer within ``FORWARD_TIMEOUT`` gets ``unavailable`` (the client sends it again, same
``seq``), and the owner is looked up again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from redis.exceptions import RedisError

from solrace.cluster.deaths import Deaths
from solrace.cluster.keeper import Keeper
from solrace.cluster.remote import Followers, RemoteSession
from solrace.cluster.routing import LOCAL, Client
from solrace.core.errors import Code
from solrace.protocol import codec, commands, internal, messages
from solrace.protocol.event import Event, Publishable
from solrace.runtime.redis_connect import UNITS, proc_key, unit_of
from solrace.runtime.supervisor import Supervisor
from solrace.settings import (
    ALIVE_MS,
    DEAD_LOOK_EVERY,
    FINISHED_GRACE,
    FORWARD_TIMEOUT,
    GONE_AFTER,
    JANITOR_EVERY,
    LEASE_MS,
    MAX_FOLLOWED,
    OWNER_CHECK_EVERY,
    RENEW_EVERY,
    START_RETRY_MAX,
)

if TYPE_CHECKING:
    from solrace.bus.redis_bus import RedisBus
    from solrace.service.hub import Hub
    from solrace.store.redis_store import RedisStore

#: Seconds a takeover (lease, rebuild of the unit's races) may take before it is given up.
TAKE_TIMEOUT = 30.0


log = logging.getLogger(__name__)


def new_pid() -> str:
    return f"{os.getpid()}-{secrets.token_hex(3)}"


class Waiting(NamedTuple):
    """A command forwarded to the owner of its unit, waiting for the owner's answer."""

    conn: Client
    done: asyncio.Future[None]
    timer: asyncio.TimerHandle
    owner: str
    unit: str
    cmd: commands.Command


class Cluster:
    """This process's part in the service (see the module docstring)."""

    def __init__(self, hub: Hub, store: RedisStore, bus: RedisBus, pid: str,
                 supervisor: Supervisor, redis_url: str) -> None:
        #: Where the leases' keeper (a thread: solrace.cluster.keeper) renews them.
        self.redis_url = redis_url
        self.keeper: Keeper | None = None
        self.hub = hub
        self.store = store
        self.bus = bus
        self.pid = pid
        self.supervisor = supervisor
        self.owners: dict[str, str] = {}  # unit -> pid of its owner, as last seen
        self.sessions: dict[tuple[str, int], RemoteSession] = {}
        self.followers: Followers = {}
        #: Forwarded commands waiting for their owner's answer, by request number.
        self.pending: dict[int, Waiting] = {}
        self.connections: dict[int, Client] = {}  # this process's, by id
        self._ids = itertools.count(1)
        self._taking: dict[str, asyncio.Task[str | None]] = {}
        self._over_since: dict[str, float] = {}  # owned units whose races are all over
        self._loops: list[asyncio.Task[None]] = []
        self._missing: set[str] = set()  # processes whose alive key was missing once
        self.deaths = Deaths(store.keeper, time.monotonic)

    def owns(self, race_id: str) -> bool:
        """Does this process run the room of this race (own its unit) now?"""
        return self.store.owns(unit_of(race_id))

    def publish_with_commit(self, race: str, events: Sequence[Publishable]) -> None:
        """Hand an outcome's messages to the store: they go to the other processes in the
        script that writes the outcome, exactly when it is durable."""
        self.store.publish(race, self.bus.payload(race, events))

    def remote_followers(self, race: str) -> list[RemoteSession]:
        """The connections of other processes that follow ``race`` (the bus publishes their
        views for them)."""
        return list(self.followers.get(race, {}).values())

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Join the service. While Redis cannot be reached this waits and tries again (with
        a line in the log each time, at most every few seconds) rather than giving up: a
        process started before its Redis, or during an outage, serves once Redis does."""
        delay = 0.25
        while True:
            try:
                await self.store.start()
                await self.bus.start()
                await self.store.client.set(proc_key(self.pid, "alive"), "1", px=ALIVE_MS)
                break
            except (RedisError, OSError) as exc:
                log.warning("waiting for Redis: %s", exc)
                await asyncio.sleep(delay)
                delay = min(START_RETRY_MAX, delay * 2)
        self.keeper = Keeper(self.redis_url, self.pid, self.store.epochs,
                             asyncio.get_running_loop(), self._lost_lease, self._renewal_failed)
        self.keeper.start()
        self._loops = [self.supervisor.spawn(self._renew(), "renew leases"),
                       self.supervisor.spawn(self._janitor(), "janitor"),
                       self.supervisor.spawn(self._watch_owners(), "watch owners")]

    async def stop(self) -> None:
        """Let go of every unit (so another process takes them at once) and stop."""
        if self.keeper is not None:
            self.keeper.stop()
        for task in self._loops:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.store.flushed(), 2)
        # All at once, and not for long: a unit not let go lapses within LEASE_MS anyway.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(
                *(self.store.release(unit) for unit in list(self.store.epochs)),
                self.store.client.delete(proc_key(self.pid, "alive")),
                return_exceptions=True), 2)

    def _lost_lease(self, unit: str, epoch: int) -> None:
        """The keeper found a lease gone (in the loop)."""
        if self.store.epochs.get(unit) == epoch:  # not let go or taken again meanwhile
            del self.store.epochs[unit]
            self.lost(unit)

    def _renewal_failed(self, exc: Exception) -> None:
        log.warning("cannot renew leases: %s", exc)
        if self.store.healthy:
            self.store.unreachable()
            self.hub.watch.failed(set(), exc)

    async def _renew(self) -> None:
        rounds = 0
        while True:
            await asyncio.sleep(RENEW_EVERY)
            try:
                if self.keeper is not None:
                    self.keeper.beat()
                rounds += 1
                if rounds % DEAD_LOOK_EVERY == 0:
                    await self._drop_dead_processes()
                await self._let_finished_go()
            except RedisError as exc:
                # Redis does not answer: say so (/healthz 503, clients told the service is
                # degraded) and probe until it does, as after a failed write.
                log.warning("cannot renew leases: %s", exc)
                if self.store.healthy:
                    self.store.unreachable()
                    self.hub.watch.failed(set(), exc)
            except Exception:
                log.exception("renewing leases failed")

    async def _let_finished_go(self) -> None:
        """Release units whose races have all been over for ``FINISHED_GRACE`` seconds."""
        now = asyncio.get_running_loop().time()
        live = {unit_of(r) for r in self.hub.races} | {
            tid for tid, t in self.hub.organizer.tournaments.items() if t.status != "finished"} | {
            aid for aid, a in self.hub.arenas.items() if a.finished_at is None}
        for unit in list(self.store.epochs):
            if unit in live:
                self._over_since.pop(unit, None)
                continue
            since = self._over_since.setdefault(unit, now)
            if now - since >= FINISHED_GRACE:
                del self._over_since[unit]
                await self.store.release(unit)
                for race_id in [r for r in self.hub.finished if unit_of(r) == unit]:
                    self.hub.forget(race_id)

    async def _drop_dead_processes(self) -> None:
        """Forget the connections of processes that died (their racers go offline).

        A process counts as dead once its ``alive`` key has been missing at two looks in a
        row (a Redis restarted from a file a second old may have lost a key that its process
        renews every RENEW_EVERY seconds). Its connections are forgotten here only: nothing
        is sent to that process (were it alive after all, its connections keep speaking for
        their racers, and its next command brings them back)."""
        pids = {pid for pid, _ in self.sessions}
        for pid in pids:
            if await self.store.client.exists(proc_key(pid, "alive")):
                self._missing.discard(pid)
                continue
            if pid not in self._missing:
                self._missing.add(pid)
                continue
            self._missing.discard(pid)
            for (p, conn), session in list(self.sessions.items()):
                if p == pid:
                    session.silent = True
                    self._gone(session)
                    del self.sessions[p, conn]

    async def _janitor(self) -> None:
        """Take over the units this process has clients on, and unfinished units nobody owns,
        when their owner is gone."""
        rounds = 0
        while True:
            await asyncio.sleep(JANITOR_EVERY)
            rounds += 1
            try:
                units = self.bus.followed_units()
                if rounds % 5 == 0:
                    some = await self.store.client.srandmember(UNITS, 20) or []
                    units |= {u.decode() if isinstance(u, bytes) else str(u) for u in some}
                held = await self.store.holders([u for u in units if not self.store.owns(u)])
                dead = await self.deaths.gone({h for h in held.values()
                                               if h is not None and h != self.pid})
                for unit, holder in held.items():
                    if self.store.owns(unit):
                        continue
                    if holder is None:
                        await self.take(unit)
                    elif holder in dead:
                        log.warning("%s is gone (its inbox unheard): taking %s", holder, unit)
                        await self.take(unit, dead=holder)
            except RedisError as exc:
                log.warning("janitor: %s", exc)
            except Exception:
                log.exception("janitor failed")

    # ------------------------------------------------------------ ownership
    async def take(self, unit: str, dead: str | None = None) -> str | None:
        """Own ``unit`` if nobody does, or if the process ``dead`` does (it is gone, its lease
        not lapsed yet), rebuilding its races here: None; else its owner."""
        if self.store.owns(unit):
            return None
        taking = self._taking.get(unit)
        if taking is None:
            taking = self.supervisor.spawn(self._take(unit, dead), f"take {unit}",
                                           timeout=TAKE_TIMEOUT)
            self._taking[unit] = taking
            taking.add_done_callback(lambda _: self._taking.pop(unit, None))
        return await asyncio.shield(taking)

    async def _take(self, unit: str, dead: str | None) -> str | None:
        owner = await self.store.acquire(unit, dead)
        if owner is not None:
            self.owners[unit] = owner
            return owner
        self.owners[unit] = self.pid
        began = asyncio.get_running_loop().time()
        # Through the hub: a command that came for the unit meanwhile shares this load.
        t = await self.hub.load_tournament(unit)
        if t is not None:
            log.warning("took over %s %s (rebuilt with its races in %.2f s)",
                        getattr(t, "kind", "tournament"), t.tid,
                        asyncio.get_running_loop().time() - began)
            self.bus.publish_control(unit, internal.Owner(unit, self.pid))
            return None
        race = await self.store.load(unit)
        if race is None:  # nothing there (a mistyped id): nothing to own
            await self.store.release(unit)
            self.owners.pop(unit, None)
            return None
        if self.hub.get(race.race) is None:
            # Not if a load (an HTTP request, a command) adopted it while this one read it:
            # owned since the acquire, the race was rebuilt there too, and a second copy's
            # catch-up would write the same entries again (a CONFLICT, then a rebuild).
            self.hub.catch_up(race)  # transitions due while nobody owned it happen now
            self.hub.adopt(race)
        log.warning("took over %s", unit)
        self.bus.publish_control(unit, internal.Owner(unit, self.pid))
        return None

    def lost(self, unit: str) -> None:
        """Another process owns ``unit`` now: stop running its races here."""
        log.warning("lost %s to another process", unit)
        self.owners.pop(unit, None)
        self.hub.organizer.forget(unit)
        self.hub.arena_director.forget(unit)
        for race_id in [r for r in list(self.hub.races) + list(self.hub.finished)
                        if unit_of(r) == unit]:
            self.hub.forget(race_id)

    # ------------------------------------------------------------- routing
    def route(self, conn: Client, cmd: commands.Command) -> Any:
        """:data:`LOCAL` when this process runs ``cmd`` itself; otherwise the forwarding is
        under way and the return value is what the reader awaits (None: nothing)."""
        if isinstance(cmd, (commands.Ping, commands.Create, commands.PlayerCmd, commands.PlayCmd,
                            commands.ModCmd)) or (
                isinstance(cmd, (commands.TournamentCmd, commands.ArenaCmd))
                and cmd.action == "create"):
            return LOCAL
        unit = unit_of(cmd.race)
        if self.store.owns(unit):
            return LOCAL
        owner = self.owners.get(unit)
        barrier = not isinstance(cmd, (commands.MoveCmd, commands.Undo))
        follows = isinstance(cmd, (commands.Watch, commands.Join)) or (
            isinstance(cmd, (commands.TournamentCmd, commands.ArenaCmd))
            and cmd.action in ("watch", "join"))
        if owner is not None and owner != self.pid and not follows:
            done = self.forward(owner, conn, cmd)
            return done if barrier else None
        return self.supervisor.spawn(self._take_then(conn, cmd), f"route to {unit}",
                                     timeout=TAKE_TIMEOUT + FORWARD_TIMEOUT)

    async def _take_then(self, conn: Client, cmd: commands.Command) -> None:
        unit = unit_of(cmd.race)  # type: ignore[union-attr]
        try:
            owner = await self.take(unit)
        except RedisError as exc:
            log.warning("cannot reach Redis to find %s's owner: %s", unit, exc)
            self.hub.reply_later(conn, messages.error(
                Code.UNAVAILABLE, "the service cannot reach its store right now: try again",
                cmd.rid))
            return
        if owner is None:
            barrier = conn.handle_local(cmd)
        else:
            if isinstance(cmd, (commands.Watch, commands.Join)) or (
                    isinstance(cmd, commands.TournamentCmd) and cmd.action in ("watch", "join")):
                # Subscribe before the snapshot: follow the race here and make sure its
                # unit's channel reaches this process before the owner takes the snapshot,
                # so that no event falls in between (the client drops the ones it has).
                if cmd.race not in conn.follows and len(conn.follows) >= MAX_FOLLOWED:
                    conn.send(messages.error(Code.LIMIT_REACHED,
                                          f"one connection follows at most {MAX_FOLLOWED} races",
                                          cmd.rid))
                    return
                conn.follow(cmd.race, getattr(cmd, "boards", True), getattr(cmd, "lean", False))
                await self.bus.ready_for(cmd.race)
            barrier = self.forward(owner, conn, cmd)
        if barrier is not None:
            await barrier

    def state_of(self, conn: Client, unit: str) -> internal.Where:
        """What ``conn`` is in ``unit``: the racers it speaks for, its seats, what it
        follows there."""
        def mine(d: dict[str, Any]) -> dict[str, Any]:
            return {r: v for r, v in d.items() if unit_of(r) == unit}

        return internal.Where(unit, conn.id, conn.address, mine(conn.players),
                              mine(conn.seats), mine(conn.follows), conn.who,
                              [r for r in conn.lean if unit_of(r) == unit])

    def forward(self, owner: str, conn: Client, cmd: commands.Command) -> asyncio.Future[None]:
        """Send ``cmd`` to the owner's inbox; the future is done when the owner has answered
        (or with ``unavailable`` after ``FORWARD_TIMEOUT``)."""
        unit = unit_of(cmd.race)  # type: ignore[union-attr]
        req = next(self._ids)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = asyncio.get_running_loop().call_later(
            FORWARD_TIMEOUT, self._timed_out, req, unit, owner, cmd)
        self.pending[req] = Waiting(conn, done, timer, owner, unit, cmd)
        self.bus.send_to(owner, internal.Forward(self.pid, req, codec.to_dict(cmd),
                                                 self.state_of(conn, unit)))
        return done

    def _timed_out(self, req: int, unit: str, owner: str, cmd: commands.Command) -> None:
        entry = self.pending.pop(req, None)
        if entry is None:
            return
        conn, done = entry.conn, entry.done
        entry.timer.cancel()
        self.owners.pop(unit, None)  # look the owner up again next time
        self.supervisor.spawn(self._after_silence(conn, done, unit, owner, cmd),
                              f"after the silence of {owner}",
                              timeout=(LEASE_MS + ALIVE_MS) / 1000 + FORWARD_TIMEOUT)

    async def _watch_owners(self) -> None:
        """While commands wait for an owner's answer, look every OWNER_CHECK_EVERY seconds
        whether that owner is still alive: one that died (its inbox unheard, or its ``alive``
        key lapsed) is not waited for until FORWARD_TIMEOUT; its units are taken here at once
        and the waiting commands run (:meth:`_after_silence`)."""
        while True:
            await asyncio.sleep(OWNER_CHECK_EVERY)
            if not self.pending:
                continue
            try:
                owners = list({w.owner for w in self.pending.values()})
                async with self.store.keeper.pipeline(transaction=False) as pipe:
                    for pid in owners:
                        pipe.exists(proc_key(pid, "alive"))
                    alive = await pipe.execute()
                dead = await self.deaths.gone(owners)
                for pid, up in zip(owners, alive, strict=True):
                    if not up or pid in dead:
                        for req, w in list(self.pending.items()):
                            if w.owner == pid:
                                self._timed_out(req, w.unit, pid, w.cmd)
            except RedisError as exc:
                log.warning("cannot look at the owners: %s", exc)
            except Exception:
                log.exception("watching the owners failed")

    async def _after_silence(self, conn: Client, done: asyncio.Future[None], unit: str,
                             owner: str, cmd: commands.Command) -> None:
        """The owner did not answer. If it is gone (its inbox unheard, or its ``alive`` key
        lapsed), take the unit as soon as it is known dead or its lease lapsed, and run the
        command here (a move already applied is recognised by its ``seq``); if it is alive
        but slow, answer ``unavailable``."""
        try:
            if (not await self.deaths.silent([owner])
                    and await self.store.client.exists(proc_key(owner, "alive"))):
                conn.send(messages.error(Code.UNAVAILABLE, "the race's server is slow: try again",
                                      cmd.rid))
                return
            deadline = asyncio.get_running_loop().time() + (LEASE_MS + ALIVE_MS) / 1000
            while asyncio.get_running_loop().time() < deadline:
                dead = owner if owner in await self.deaths.gone([owner]) else None
                holder = await self.take(unit, dead)
                if holder is None:
                    barrier = conn.handle_local(cmd)
                    if barrier is not None:
                        await barrier
                    return
                if holder != owner:
                    barrier = self.forward(holder, conn, cmd)
                    await barrier
                    return
                await asyncio.sleep(GONE_AFTER)
            conn.send(messages.error(Code.UNAVAILABLE, "the race's server is gone: try again",
                                  cmd.rid))
        except RedisError:
            conn.send(messages.error(Code.UNAVAILABLE, "the service cannot reach its store: try "
                                  "again", cmd.rid))
        finally:
            if not done.done():
                done.set_result(None)

    def joined(self, conn: Client) -> None:
        """A connection of this process opened (replies for it may come from elsewhere)."""
        self.connections[conn.id] = conn

    def gone(self, conn: Client) -> None:
        """A connection of this process closed: tell the owners of the units it was in."""
        self.connections.pop(conn.id, None)
        units = {unit_of(r) for r in (*conn.players, *conn.follows)}
        for unit in units:
            owner = self.owners.get(unit)
            if owner is not None and owner != self.pid:
                self.bus.send_to(owner, internal.Gone(self.pid, conn.id))

    # --------------------------------------------------------------- inbox
    def inbox(self, msg: internal.Inbox) -> None:
        if isinstance(msg, internal.Forward):
            self.supervisor.spawn(self._run_remote(msg), f"forwarded command {msg.req}",
                                  timeout=TAKE_TIMEOUT + FORWARD_TIMEOUT)
        elif isinstance(msg, internal.Deliver):
            conn = self.connections.get(msg.conn)
            if conn is not None:
                conn.send(Event.from_json(msg.payload))
        elif isinstance(msg, internal.Op):
            conn = self.connections.get(msg.conn)
            if conn is not None:
                self._apply_op(conn, msg)
        elif isinstance(msg, internal.Done):
            entry = self.pending.pop(msg.req, None)
            if entry is not None:
                entry.timer.cancel()
                if not entry.done.done():
                    entry.done.set_result(None)
        elif isinstance(msg, internal.Gone):
            session = self.sessions.pop((msg.sender, msg.conn), None)
            if session is not None:
                self._gone(session)
        elif isinstance(msg, internal.Hello):
            session = self._session(msg.sender, msg.where)
            for race, player in list(session.players.items()):
                if self.hub.get(race) is not None:
                    self.hub.bind(session, race, player)
            for race in session.follows:
                self.followers.setdefault(race, {})[(session.pid, session.conn)] = session

    def control(self, msg: internal.Owner) -> None:
        """A control message on a unit's channel: a new owner asks who is there."""
        if msg.pid != self.pid:
            unit = msg.unit
            self.owners[unit] = msg.pid
            if self.store.owns(unit):  # we thought we owned it: we do not any more
                self.lost(unit)
            for conn in list(self.connections.values()):
                where = self.state_of(conn, unit)
                if where.players or where.follows:
                    self.bus.send_to(msg.pid, internal.Hello(self.pid, where))

    @staticmethod
    def _apply_op(conn: Client, msg: internal.Op) -> None:
        if msg.op == "follow":
            boards, lean = msg.value if isinstance(msg.value, list) else (msg.value, False)
            conn.follow(msg.race, bool(boards), bool(lean))
        elif msg.op == "unfollow":
            conn.unfollow(msg.race)
        elif msg.op == "attach":
            conn.attach(msg.race, msg.value)
        elif msg.op == "detach":
            conn.detach(msg.race)

    def _session(self, pid: str, where: internal.Where) -> RemoteSession:
        session = self.sessions.get((pid, where.conn))
        if session is None:
            session = self.sessions[pid, where.conn] = RemoteSession(
                self.bus, self.followers, pid, where.conn, where.address)
        session.update(where)
        return session

    def _gone(self, session: RemoteSession) -> None:
        for race in list(session.players):
            self.hub.unbind(session, race)
        for race in list(session.follows):
            self.followers.get(race, {}).pop((session.pid, session.conn), None)

    async def _run_remote(self, msg: internal.Forward) -> None:
        """Run a command forwarded by another process, then tell it this one is done."""
        session = self._session(msg.sender, msg.where)
        cmd: commands.Command | None = None
        try:
            cmd = codec.parse_command(msg.command)
            unit = unit_of(cmd.race)  # type: ignore[union-attr]
            if not self.store.owns(unit):
                owner = await self.take(unit)
                if owner is not None:  # not ours any more: the sender asks the owner
                    session.send(messages.error(Code.UNAVAILABLE, "the race moved: try again",
                                                cmd.rid))
                    return
            waiting = self.hub.execute(session, cmd, barrier=True)  # to know when its steps ran
            if waiting is not None:
                await waiting
        except Exception as exc:
            self.hub.refuse(session, cmd, exc)  # type: ignore[arg-type]
        finally:
            self.bus.send_to(msg.sender, internal.Done(msg.req))
