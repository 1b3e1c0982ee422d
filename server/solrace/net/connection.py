"""One WebSocket client: reading its commands, writing its frames, following races.

Per connection there is one reader (the handler coroutine: it decodes frames, dispatches each
command and hands the effects to the hub) and one writer task (it takes frames from a bounded
queue and sends them with back-pressure). Most frames skip the queue: they are corked and
written together at the end of the loop turn (see :meth:`Connection.send`). Moves and undos
never make the reader wait; a command that binds the connection to a racer (``join``) or
creates a race does, until it is durable.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import itertools
import logging
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeGuard

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from solrace.bus.base import Subscription
from solrace.cluster.routing import LOCAL
from solrace.core.errors import Code
from solrace.core.identity import Who
from solrace.core.race_parts import RaceError
from solrace.net import raw_frames
from solrace.protocol import codec, commands, messages
from solrace.protocol.codec import ProtocolError
from solrace.protocol.event import Event, Publishable
from solrace.protocol.frames import frame
from solrace.runtime.supervisor import Supervisor
from solrace.settings import CLOSE_TIMEOUT, EVENT_DELAY, OUT_QUEUE, WRITE_LIMIT

if TYPE_CHECKING:
    from solrace.service.front import Front
    from solrace.service.hub import Hub

log = logging.getLogger(__name__)

_ids = itertools.count(1)

#: Seconds a command may wait for what it needs (a race loaded, a hint worked out): past it,
#: the job is given up and the client may send the command again.
SETTLE_TIMEOUT = 60.0
#: Commands one connection may have waiting behind one that settles (then it stops reading).
MAX_BACKLOG = 64


class RateLimiter:
    """Token bucket: ``rate`` messages per second with bursts of ``2 * rate``.

    :meth:`check` returns "ok", "limited" (refuse this message) or "flood" (the client went on
    sending far past the limit: close the connection). Every message costs a token, refused ones
    too, so a client that keeps sending faster than ``rate`` ends in "flood".
    """

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = 2 * rate
        self.tokens = self.capacity
        self.clock = clock
        self.last = clock()
        self.verdict = "ok"  # of the latest check

    def check(self) -> str:
        if self.rate <= 0:
            return "ok"
        t = self.clock()
        self.tokens = min(self.capacity, self.tokens + (t - self.last) * self.rate)
        self.last = t
        self.tokens -= 1
        if self.tokens >= 0:
            self.verdict = "ok"
        elif self.tokens >= -self.capacity:
            self.verdict = "limited"
        else:
            self.verdict = "flood"
        return self.verdict


def wants_batch(ws: ServerConnection) -> bool:
    """Did the client open ``/ws?batch=1`` (see :func:`batch_frame`)?"""
    request = getattr(ws, "request", None)
    if request is None or "?" not in request.path:
        return False
    query = urllib.parse.parse_qs(request.path.split("?", 1)[1])
    return query.get("batch", ["0"])[-1] in ("1", "true")


def batch_frame(payloads: list[bytes], binary: bool) -> bytes:
    """One frame carrying several encoded messages, in order, as one JSON array (or msgpack
    array). Only for clients that asked for it with ``/ws?batch=1``: a reader then parses one
    frame per loop turn of the server instead of one per message (a racer in a race of 8 gets
    up to 8 ``progress`` events per round of moves besides its own ``state``)."""
    if binary:
        n = len(payloads)
        if n < 16:
            head = bytes((0x90 | n,))
        elif n < 1 << 16:
            head = b"\xdc" + n.to_bytes(2, "big")
        else:
            head = b"\xdd" + n.to_bytes(4, "big")
        return frame(head + b"".join(payloads), True)
    return frame(b"[" + b",".join(payloads) + b"]", False)


def _names_itself(cmd: commands.Command, anonymous: bool, seats: dict[str, str]
                  ) -> TypeGuard[commands.Join | commands.TournamentCmd]:
    """Does ``cmd`` make a racer (or a tournament's entrant) under a name it gives? An
    anonymous connection's new seat in a race, and anyone's entry in a tournament."""
    if isinstance(cmd, commands.Join):
        return anonymous and cmd.token is None and cmd.name is not None and \
            cmd.race not in seats
    return isinstance(cmd, commands.TournamentCmd) and cmd.action == "join" and \
        cmd.token is None and cmd.name is not None


class Output:
    """The connections with frames to write at the end of this loop turn (corked), or within
    ``EVENT_DELAY`` (held race events of batch clients). Shared by every connection.

    Connections with a direct reply waiting (``urgent``) are written first, and
    :meth:`express` writes them at once: the bus calls it before a fan-out to a crowd, so a
    racer's answer never waits behind thousands of spectators' copies of his move.
    """

    def __init__(self) -> None:
        self.urgent: list[Connection] = []
        self.corked: list[Connection] = []
        self.held: list[Connection] = []
        #: While one pass writes: the batch frame of each run of events (by their ids, alive
        #: until the pass ends), so a race's spectators share one frame for a move's progress
        #: and board.
        self.frames: dict[tuple[int, ...], bytes] = {}

    def cork(self, conn: Connection, urgent: bool = False) -> None:
        if not self.corked and not self.urgent:
            asyncio.get_running_loop().call_soon(self.uncork)
        (self.urgent if urgent else self.corked).append(conn)

    def express(self) -> None:
        """Write now what waits for a direct reply (before a crowd's fan-out)."""
        urgent, self.urgent = self.urgent, []
        try:
            for conn in urgent:
                conn.uncork()
        finally:
            self.frames.clear()

    def uncork(self) -> None:
        urgent, self.urgent = self.urgent, []
        corked, self.corked = self.corked, []
        try:
            for conn in urgent:
                conn.uncork()
            for conn in corked:
                conn.uncork()
        finally:
            self.frames.clear()

    def hold(self, conn: Connection) -> None:
        if not self.held:
            asyncio.get_running_loop().call_later(EVENT_DELAY, self.release)
        self.held.append(conn)

    def release(self) -> None:
        held, self.held = self.held, []
        try:
            for conn in held:
                conn.holding = False
                conn.uncork()
        finally:
            self.frames.clear()


class Connection:
    """One WebSocket client: its bounded outgoing queue, encoding, and the racers it speaks for.

    ``players`` maps race → player id for races this connection joined as a racer (the only way
    to move for a racer is to join with its token first); ``follows`` maps each race it follows
    to whether it wants the other racers' boards; ``subs`` holds the bus subscriptions.
    """

    def __init__(self, hub: Hub, output: Output, ws: ServerConnection, rate_limit: float,
                 supervisor: Supervisor, address: str = "",
                 router: Callable[[Connection, commands.Command], Any] | None = None,
                 front: Front | None = None) -> None:
        self.id = next(_ids)
        #: Players, one-click races, the daily deal (solrace.service.front); None: none.
        self.front = front
        #: With several processes: sends a command to the process that runs its race; LOCAL
        #: when it is this one, else what the reader awaits (None: nothing).
        self.router = router
        self.address = address
        self.hub = hub
        self.output = output
        self.ws = ws
        self.supervisor = supervisor
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=OUT_QUEUE)
        self.binary = False
        self.players: dict[str, str] = {}
        self.seats: dict[str, str] = {}
        self.follows: dict[str, bool] = {}
        self.lean: set[str] = set()
        #: The hash of the browser's key (its ``sr_player`` cookie), if it sent one, and the
        #: player it is once known (solrace.service.accounts).
        self.key: str | None = None
        self.who: Who | None = None
        #: Its place in a quick-race queue, if it seeks one (solrace.service.matchmaker).
        self.seek: Any = None
        self.subs: dict[str, Subscription] = {}
        self.closing = False
        self.sending = False  # the writer task is inside ws.send()
        self.corked: list[Event] = []  # events waiting for Output.uncork()
        self.batch = wants_batch(ws)
        self.scheduled = False  # Output.uncork() writes ``corked`` at the end of this turn
        self.holding = False  # Output.release() writes ``corked`` within EVENT_DELAY
        self.limiter = RateLimiter(rate_limit)
        #: Commands read while an earlier one waits for something (a hint worked out, a race
        #: loaded), run in order once it is done; None when nothing waits.
        self.backlog: collections.deque[commands.Command] | None = None
        self.drained = asyncio.Event()  # the backlog has room again
        self.gone = False  # the reader has ended: nothing more runs for it

    # ---------------------------------------------------------------- sending
    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None:
        """Send a frame without waiting, in order.

        Fast path: when nothing is queued, the writer is idle and the transport's buffer is
        below ``WRITE_LIMIT``, the event is added to ``corked``, and :meth:`Output.uncork`
        writes all of this connection's frames in one system call at the end of the loop turn,
        with no task switch: the event's ready-made frame (built once for all recipients), or,
        for a client that asked for batches, one frame holding every message of the turn.
        A racer's client that asked for batches gets race events (``urgent`` false) up to
        ``EVENT_DELAY`` later, with its next reply if one comes sooner: in a busy race a
        racer then gets one frame per reply rather than one per opponent's move as well.
        Spectators get them at the end of the loop turn.
        Otherwise the frame waits in the bounded queue for the writer task, which goes through
        ``ws.send()`` and so respects back-pressure. If the queue is full the client is not
        reading fast enough: it is disconnected (close code 1013) and may reconnect and
        resume. Nothing is sent once the closing handshake has begun.
        """
        if self.closing:
            return
        event = msg if isinstance(msg, Event) else Event(msg)
        # With frames already corked, the checks below passed when the first one was (and
        # nothing can be queued without uncorking first): a fan-out only appends.
        if not self.corked:
            waiting = raw_frames.backlog(self.ws)
            if self.sending or not self.queue.empty() or waiting is None or waiting >= WRITE_LIMIT:
                try:
                    self.queue.put_nowait(event)
                except asyncio.QueueFull:
                    self.kick(1013, "too slow: reconnect and resume")
                return
        self.corked.append(event)
        # Only a racer's events wait for its next reply: a spectator sends no moves, so
        # holding its events would only delay them.
        if urgent or not self.batch or not self.players:
            if not self.scheduled:
                self.scheduled = True
                self.output.cork(self, urgent)
        elif not self.scheduled and not self.holding:
            self.holding = True
            self.output.hold(self)

    def kick(self, code: int, reason: str) -> None:
        """Close the connection from synchronous code (the close handshake runs in a task)."""
        if self.closing:
            return
        self.closing = True
        log.info("closing %s: %s", self.ws.remote_address, reason)
        self.supervisor.spawn(self.ws.close(code, reason), f"close connection {self.id}",
                              timeout=CLOSE_TIMEOUT * 3)

    def uncork(self) -> None:
        """Write the corked frames in one system call (dropped if the socket is closing)."""
        events, self.corked = self.corked, []
        self.scheduled = False
        if not events:
            return
        binary = self.binary
        if len(events) == 1:
            data = events[0].frame(binary)
        elif not self.batch:
            data = b"".join([e.frame(binary) for e in events])
        else:
            # Every spectator of a race has the same run of events: its frame is built once.
            run = (binary, *map(id, events))
            frames = self.output.frames
            data = frames.get(run)  # type: ignore[assignment]
            if data is None:
                data = frames[run] = batch_frame([e.encoded(binary) for e in events], binary)
        raw_frames.write(self.ws, data)

    def attach(self, race: str, player: str) -> None:
        self.players[race] = player
        self.seats[race] = player
        sub = self.subs.get(race)
        if sub is not None:
            sub.address(player)

    def detach(self, race: str) -> str | None:
        sub = self.subs.get(race)
        if sub is not None:
            sub.address(None)
        return self.players.pop(race, None)

    def follow(self, race: str, boards: bool = True, lean: bool = False) -> None:
        """Subscribe to the race's events (idempotent). Without ``boards``, the other racers'
        ``board`` views are left out (a racer's own board comes with its ``state``). With
        ``lean``, its racer's moves and undos are answered with lean states."""
        self.follows[race] = boards
        if lean:
            self.lean.add(race)
        else:
            self.lean.discard(race)
        if race in self.subs:
            return

        send = self.send

        def deliver(event: Publishable) -> None:
            if event.to is None and type(event) is Event:  # a race event, for everyone
                send(event, event.urgent)
                return
            picked = event.pick(self, race)
            if picked is not None:
                send(picked, picked.to is not None or picked.urgent)

        sub = self.subs[race] = self.hub.bus.subscribe(race, deliver)
        # What is addressed to another racer or player is not even offered (Event.pick).
        sub.address(self.players.get(race))

    def unfollow(self, race: str) -> None:
        sub = self.subs.pop(race, None)
        self.follows.pop(race, None)
        self.lean.discard(race)
        if sub is not None:
            sub.cancel()

    async def writer(self) -> None:
        """Send queued frames in order. Ends when the socket closes or the task is cancelled;
        frames still queued then are dropped (the client resyncs with a snapshot)."""
        try:
            while True:
                event = await self.queue.get()
                self.sending = True
                await self.ws.send(event.encoded(self.binary), text=not self.binary)
                self.sending = False
        except ConnectionClosed:
            pass

    # --------------------------------------------------------------- reading
    async def run(self) -> None:
        """Read frames until the socket closes. A bad frame gets an ``error`` reply; nothing
        a client sends can end this loop except by closing or flooding."""
        writer = self.supervisor.spawn(self.writer(), f"writer of connection {self.id}")
        try:
            async for data in self.ws:
                # Once closing, keep reading and discarding: the peer's close frame is behind
                # whatever it sent before, and websockets stops reading when frames pile up.
                if self.closing:
                    continue
                self.binary = isinstance(data, bytes)
                if self.limiter.check() == "flood":
                    self.kick(1008, "too many messages")
                    continue
                cmd = self.parse(data)
                if cmd is None:
                    continue
                if self.backlog is not None:
                    # An earlier command waits (a hint can take seconds): a ping is answered
                    # at once, or the client's heartbeat would give the socket up; anything
                    # else waits its turn, in order.
                    if isinstance(cmd, commands.Ping):
                        self.handle(cmd)
                        continue
                    while len(self.backlog) >= MAX_BACKLOG:
                        self.drained.clear()
                        await self.drained.wait()
                        if self.backlog is None:
                            break
                    if self.backlog is not None:
                        self.backlog.append(cmd)
                        continue
                barrier = self.handle(cmd)
                if barrier is not None:
                    self.backlog = collections.deque()
                    self.supervisor.spawn(self._drain(barrier), f"backlog of {self.id}")
        except ConnectionClosed:
            pass
        finally:
            self.gone = True
            writer.cancel()
            if self.front is not None:
                self.front.closed(self)
            for race in list(self.players):
                self.hub.unbind(self, race)
            for race in list(self.subs):
                self.unfollow(race)

    async def _drain(self, barrier: Any) -> None:
        """Wait for ``barrier``, then run the commands read meanwhile, each after the one
        before it is done; none once the connection is gone."""
        try:
            while True:
                try:
                    await barrier
                except Exception:
                    log.exception("a command of connection %s failed", self.id)
                while self.backlog and not self.gone:
                    cmd = self.backlog.popleft()
                    self.drained.set()
                    barrier = self.handle(cmd)
                    if barrier is not None:
                        break
                else:
                    return
        finally:
            self.backlog = None
            self.drained.set()

    def parse(self, data: str | bytes) -> commands.Command | None:
        """The command in ``data``; None after replying with an error."""
        try:
            cmd = codec.decode(data)
        except ProtocolError as exc:
            self.hub.reply_later(self, messages.error(exc.code, exc.message, exc.rid))
            return None
        if self.limiter.verdict == "limited":
            self.hub.reply_later(
                self, messages.error(Code.RATE_LIMITED, "too many messages: slow down", cmd.rid)
            )
            return None
        return cmd

    def handle(self, cmd: commands.Command) -> asyncio.Future[Any] | None:
        """Dispatch one command; the returned awaitable, if any, must be awaited before the
        next command is read. With several processes (``router``), a command for a race run
        by another process is forwarded there."""
        front = self.front
        if isinstance(cmd, (commands.PlayerCmd, commands.PlayCmd, commands.ModCmd)):
            if front is None:
                self.hub.reply_later(self, messages.error(
                    Code.UNAVAILABLE, "this server keeps no players", cmd.rid))
                return None
            return self.supervisor.spawn(front.handle(self, cmd), f"{cmd.action} of {self.id}",
                                         timeout=SETTLE_TIMEOUT)
        if self.who is not None and front is not None and (
                isinstance(cmd, commands.Join) and cmd.token is None):
            # A player joins under his name and rating as they are now.
            return self.supervisor.spawn(self._refreshed(front, cmd), f"join of {self.id}",
                                         timeout=SETTLE_TIMEOUT)
        if isinstance(cmd, commands.ArenaCmd) and cmd.action in ("create", "join") \
                and front is not None:
            # An arena's entrant is a player: made now if the browser is none yet.
            return self.supervisor.spawn(self._as_player(front, cmd),
                                         f"arena_{cmd.action} of {self.id}",
                                         timeout=SETTLE_TIMEOUT)
        if front is not None and _names_itself(cmd, self.who is None, self.seats):
            # Someone who is not racing as a player never races under a player's name, or a
            # reserved one: the store says (solrace.service.accounts: racer_name).
            return self.supervisor.spawn(self._renamed(front, cmd), f"join of {self.id}",
                                         timeout=SETTLE_TIMEOUT)
        return self._route(cmd)

    async def _as_player(self, front: Front, cmd: commands.ArenaCmd) -> None:
        try:
            await front.accounts.ensure(self)
        except RaceError as exc:
            self.hub.reply_later(self, messages.error(exc.code, exc.message, cmd.rid))
            return
        barrier = self._route(cmd)
        if barrier is not None:
            await barrier

    async def _refreshed(self, front: Front, cmd: commands.Command) -> None:
        await front.refresh(self)
        barrier = self._route(cmd)
        if barrier is not None:
            await barrier

    async def _renamed(self, front: Front, cmd: commands.Join | commands.TournamentCmd) -> None:
        assert cmd.name is not None
        name = await front.accounts.racer_name(cmd.name, self.who)
        barrier = self._route(cmd if name == cmd.name else dataclasses.replace(cmd, name=name))
        if barrier is not None:
            await barrier

    def _route(self, cmd: commands.Command) -> asyncio.Future[Any] | None:
        if self.router is not None:
            routed = self.router(self, cmd)
            if routed is not LOCAL:
                return routed  # type: ignore[no-any-return]
        return self.handle_local(cmd)

    def handle_local(self, cmd: commands.Command) -> asyncio.Future[Any] | None:
        """Run one command on this process's hub (:meth:`Hub.execute`). A command that needs
        something first (a race loaded from the store, a hint worked out) waits for it in a
        job of its own; the reader waits for that job (or for a barrier) before the next
        command."""
        try:
            waiting = self.hub.execute(self, cmd)
        except Exception as exc:
            self.hub.refuse(self, cmd, exc)
            return None
        if waiting is None or isinstance(waiting, asyncio.Future):
            return waiting
        return self.supervisor.spawn(self._settle(cmd, waiting),
                                     f"command {type(cmd).__name__} of {self.id}",
                                     timeout=SETTLE_TIMEOUT)

    async def _settle(self, cmd: commands.Command, waiting: Awaitable[None]) -> None:
        """Wait for a command that waits for something; a refusal is answered."""
        try:
            await waiting
        except Exception as exc:
            self.hub.refuse(self, cmd, exc)
