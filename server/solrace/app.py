"""The race server: WebSocket connections, HTTP routes and the glue around the sans-I/O rooms.

Everything that awaits lives here. Per WebSocket connection there is one reader (the handler
coroutine: it decodes frames, runs the command on the room, and queues replies) and one writer
task (it takes frames from a bounded queue and sends them). Events reach connections through the
bus. Before any reply or event goes out, the log entries of the command are committed to SQLite
(:meth:`Storage.flushed`), so an acknowledged move survives a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import http
import json
import logging
import secrets
import string
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import solrules
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from . import codec
from .bus import Bus, Event, Subscription, frame
from .codec import ProtocolError
from .memory_bus import MemoryBus
from .room import Options, Outcome, Race, RaceError
from .storage import Storage

log = logging.getLogger(__name__)

OUT_QUEUE = 256  # frames waiting for one connection; more means the client is too slow
WRITE_LIMIT = 2**15  # bytes in the transport's buffer above which frames wait in the queue
MAX_SUBSCRIPTIONS = 16  # races one connection may follow at once
#: How long a race event may wait for a reply to share its frame, for clients that asked for
#: batches (seconds); well under what a player notices.
EVENT_DELAY = 0.05
BOARD_INTERVAL = 0.1  # seconds between two board views of one race (the latest board wins)
#: The same for the racers' view of their opponents: small boards beside the racer's own, where
#: 4 updates a second look live, and a racer of a race of 8 would otherwise decode 70 boards a
#: second besides playing.
RACER_BOARD_INTERVAL = 0.25
FINISHED_CACHE = 256  # finished races kept in memory for the API and late watchers
RACE_ID_ALPHABET = string.ascii_lowercase + string.digits

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}


def client_dir() -> Path:
    """Where the browser client's files are: the installed package data if present, else
    the repo's ``client/`` directory."""
    import solrace

    packaged = Path(solrace.__file__).parent / "webclient"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "client"


def now_ms() -> int:
    return int(time.time() * 1000)


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


class Connection:
    """One WebSocket client: its bounded outgoing queue, encoding, and the racers it speaks for.

    ``players`` maps race → player id for races this connection joined as a racer (the only way
    to move for a racer is to join with its token first). ``subs`` holds bus subscriptions.
    """

    def __init__(self, app: App, ws: ServerConnection) -> None:
        self.app = app
        self.ws = ws
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=OUT_QUEUE)
        self.binary = False
        self.players: dict[str, str] = {}
        self.subs: dict[str, Subscription] = {}
        self.boards: dict[str, bool] = {}  # race -> wants the other racers' board views
        self.closing = False
        self.sending = False  # the writer task is inside ws.send()
        self.corked: list[Event] = []  # events waiting for App.uncork()
        self.batch = wants_batch(ws)
        self.scheduled = False  # App.uncork() writes ``corked`` at the end of this turn
        self.holding = False  # App.release() writes ``corked`` within EVENT_DELAY
        self.limiter = RateLimiter(app.rate_limit)

    # ---------------------------------------------------------------- sending
    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None:
        """Send a frame without waiting, in order.

        Fast path: when nothing is queued, the writer is idle and the transport's buffer is
        below ``WRITE_LIMIT``, the event is added to ``corked``, and :meth:`App.uncork` writes
        all of this connection's frames in one system call at the end of the loop turn, with
        no task switch: the event's ready-made frame (built once for all recipients), or, for
        a client that asked for batches, one frame holding every message of the turn.
        A client that asked for batches gets race events (``urgent`` false) up to
        ``EVENT_DELAY`` later, with its next reply if one comes sooner: in a busy race a
        racer then gets one frame per reply rather than one per opponent's move as well.
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
            transport = self.ws.transport
            if (
                self.sending
                or not self.queue.empty()
                or transport is None
                or transport.get_write_buffer_size() >= WRITE_LIMIT
            ):
                try:
                    self.queue.put_nowait(event)
                except asyncio.QueueFull:
                    self.kick(1013, "too slow: reconnect and resume")
                return
        self.corked.append(event)
        if urgent or not self.batch:
            if not self.scheduled:
                self.scheduled = True
                self.app.cork(self)
        elif not self.scheduled and not self.holding:
            self.holding = True
            self.app.hold(self)

    def kick(self, code: int, reason: str) -> None:
        """Close the connection from synchronous code (the close handshake runs in a task)."""
        if self.closing:
            return
        self.closing = True
        log.info("closing %s: %s", self.ws.remote_address, reason)
        self.app.spawn(self.ws.close(code, reason))

    def uncork(self) -> None:
        """Write the corked frames in one system call (dropped if the socket is closing)."""
        events, self.corked = self.corked, []
        self.scheduled = False
        if not events:
            return
        binary = self.binary
        if len(events) == 1 or not self.batch:
            data = b"".join([e.frame(binary) for e in events])
        else:
            data = batch_frame([e.encoded(binary) for e in events], binary)
        if self.ws.protocol.state is State.OPEN and self.ws.transport is not None:
            # The socket may have just closed; the reader notices and cleans up.
            with contextlib.suppress(Exception):
                self.ws.transport.write(data)

    def follow(self, race: str, boards: bool = True) -> None:
        """Subscribe to the race's events (idempotent). Without ``boards``, the other racers'
        ``board`` views are left out (a racer's own board comes with its ``state``)."""
        if race in self.subs:
            self.boards[race] = boards
            return
        if len(self.subs) >= MAX_SUBSCRIPTIONS:
            raise RaceError(
                "limit_reached", f"one connection follows at most {MAX_SUBSCRIPTIONS} races"
            )

        def deliver(event: Event) -> None:
            if event.to is not None and self.players.get(race) != event.to:
                return
            if event.board is not None:
                if race not in self.players:
                    if event.board != "spectators":
                        return
                elif event.board != "racers" or not self.boards.get(race, True):
                    return
            self.send(event, urgent=event.to is not None)

        self.boards[race] = boards
        self.subs[race] = self.app.bus.subscribe(race, deliver)

    def unfollow(self, race: str) -> None:
        sub = self.subs.pop(race, None)
        self.boards.pop(race, None)
        if sub is not None:
            sub.cancel()
        player = self.players.pop(race, None)
        if player is not None:
            self.app.presence(race, player, -1)

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
        writer = asyncio.create_task(self.writer())
        try:
            async for frame in self.ws:
                # Once closing, keep reading and discarding: the peer's close frame is behind
                # whatever it sent before, and websockets stops reading when frames pile up.
                if self.closing:
                    continue
                self.binary = isinstance(frame, bytes)
                if self.limiter.check() == "flood":
                    self.kick(1008, "too many messages")
                    continue
                cmd = self.parse(frame)
                if cmd is not None and not self.app.play(self, cmd):
                    await self.handle(cmd)
        except ConnectionClosed:
            pass
        finally:
            writer.cancel()
            for race in list(self.subs):
                self.unfollow(race)

    def parse(self, frame: str | bytes) -> codec.Command | None:
        """The command in ``frame``; None after replying with an error."""
        try:
            cmd = codec.decode(frame)
        except ProtocolError as exc:
            self.send(codec.error(exc.code, exc.message, exc.rid))
            return None
        if self.limiter.verdict == "limited":
            self.send(codec.error("rate_limited", "too many messages: slow down", cmd.rid))
            return None
        return cmd

    async def handle(self, cmd: codec.Command) -> None:
        try:
            await self.app.dispatch(self, cmd)
        except ProtocolError as exc:
            self.send(codec.error(exc.code, exc.message, exc.rid))
        except RaceError as exc:
            self.send(codec.error(exc.code, exc.message, cmd.rid))
        except Exception:
            log.exception("command failed")
            self.send(codec.error("internal", "the server failed on this message", cmd.rid))


class BoardThrottle:
    """Board views of one audience, at most one send per race per ``interval``: a burst of
    moves costs one board per racer who moved, the latest, instead of one per move; the boards
    still pending when a race ends go out before ``race_over``."""

    def __init__(self, app: App, audience: str, interval: float) -> None:
        self.app = app
        self.audience = audience
        self.interval = interval
        self.moved: dict[str, set[str]] = {}  # race -> racers whose board changed since
        self.sent: dict[str, float] = {}  # race -> loop time of the last send
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def mark(self, race_id: str, players: list[str]) -> None:
        self.moved.setdefault(race_id, set()).update(players)
        if race_id not in self.timers:
            loop = asyncio.get_running_loop()
            wait = self.sent.get(race_id, 0.0) + self.interval - loop.time()
            self.timers[race_id] = loop.call_later(max(0.0, wait), self.send, race_id)

    def send(self, race_id: str) -> None:
        timer = self.timers.pop(race_id, None)
        if timer is not None:
            timer.cancel()
        players = self.moved.pop(race_id, None)
        if players:
            self.sent[race_id] = asyncio.get_running_loop().time()
            self.app.send_boards(race_id, self.audience, players)

    def forget(self, race_id: str) -> None:
        timer = self.timers.pop(race_id, None)
        if timer is not None:
            timer.cancel()
        self.moved.pop(race_id, None)
        self.sent.pop(race_id, None)


class App:
    """The server state: live races, storage, bus, timers, and the HTTP routes."""

    def __init__(
        self,
        storage: Storage,
        bus: Bus | None = None,
        *,
        countdown: float = 3.0,
        rate_limit: float = 50.0,
        max_races: int = 1000,
        client: Path | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.storage = storage
        storage.on_commit = self.uncork
        self.bus: Bus = bus if bus is not None else MemoryBus()
        self.countdown_ms = int(countdown * 1000)
        self.rate_limit = rate_limit
        self.max_races = max_races
        self.client = client if client is not None else client_dir()
        self.clock = clock
        self.races: dict[str, Race] = {}  # unfinished races
        self.finished: OrderedDict[str, Race] = OrderedDict()
        self.timers: dict[str, tuple[int, asyncio.TimerHandle]] = {}  # race -> (deadline, timer)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.corked: list[Connection] = []
        self.held: list[Connection] = []
        # Board views waiting to be sent, per race: the racers whose board changed, the time
        # of the race's last send, and the timer of the next one.
        self.board_throttles = {
            "spectators": BoardThrottle(self, "spectators", BOARD_INTERVAL),
            "racers": BoardThrottle(self, "racers", RACER_BOARD_INTERVAL),
        }

    # ---------------------------------------------------------------- output
    def cork(self, conn: Connection) -> None:
        """Write ``conn``'s buffered frames at the end of this loop turn (see Connection.send)."""
        if not self.corked:
            asyncio.get_running_loop().call_soon(self.uncork)
        self.corked.append(conn)

    def uncork(self) -> None:
        corked, self.corked = self.corked, []
        for conn in corked:
            conn.uncork()

    def hold(self, conn: Connection) -> None:
        """Write ``conn``'s frames within ``EVENT_DELAY`` (see Connection.send)."""
        if not self.held:
            asyncio.get_running_loop().call_later(EVENT_DELAY, self.release)
        self.held.append(conn)

    def release(self) -> None:
        held, self.held = self.held, []
        for conn in held:
            conn.holding = False
            conn.uncork()

    # ------------------------------------------------------------- lifecycle
    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def recover(self) -> int:
        """Load every unfinished race from storage and catch up with the clock (a race whose
        countdown or time limit passed while the server was down moves on at once)."""
        now = self.clock()
        count = 0
        for race in self.storage.load_unfinished():
            self.races[race.race] = race
            out = race.tick(now)
            if out.finished and race.finished_at is not None:
                self.storage.mark_finished(race.race, race.finished_at)
                self._retire(race)
            else:
                self._schedule(race)
            count += 1
        self.storage.commit()
        return count

    def close(self) -> None:
        for _, handle in self.timers.values():
            handle.cancel()
        self.timers.clear()
        self.storage.commit()

    # ------------------------------------------------------------------ races
    def lookup(self, race_id: str) -> Race:
        """A live or finished race; ``not_found`` otherwise."""
        race = self._in_memory(race_id)
        if race is None:
            race = self._load_finished(race_id)
        if race is None:
            raise RaceError("not_found", f"no race {race_id[:64]!r}")
        return race

    def _in_memory(self, race_id: str) -> Race | None:
        """A live race, or a finished one still cached; never reads the database."""
        return self.races.get(race_id) or self.finished.get(race_id)

    def _load_finished(self, race_id: str) -> Race | None:
        race = self.storage.load(race_id)
        if race is None:
            return None
        if race.status != "finished":  # finished by the clock while nobody was looking
            race.tick(self.clock())
        if race.status == "finished":
            self._cache(race)
        return race

    def _cache(self, race: Race) -> None:
        self.finished[race.race] = race
        self.finished.move_to_end(race.race)
        while len(self.finished) > FINISHED_CACHE:
            self.finished.popitem(last=False)

    def _retire(self, race: Race) -> None:
        self.races.pop(race.race, None)
        timer = self.timers.pop(race.race, None)
        if timer is not None:
            timer[1].cancel()
        for throttle in self.board_throttles.values():
            throttle.forget(race.race)
        self._cache(race)

    def _schedule(self, race: Race) -> None:
        """(Re)arm the race's timer for its next deadline; a no-op when that is unchanged,
        which is the case after almost every move."""
        deadline = race.next_deadline()
        timer = self.timers.get(race.race)
        if timer is not None:
            if timer[0] == deadline:
                return
            timer[1].cancel()
            del self.timers[race.race]
        if deadline is None:
            return
        delay = max(0.0, (deadline - self.clock()) / 1000)
        handle = asyncio.get_running_loop().call_later(delay, self._on_timer, race.race)
        self.timers[race.race] = (deadline, handle)

    def _on_timer(self, race_id: str) -> None:
        self.timers.pop(race_id, None)
        race = self.races.get(race_id)
        if race is not None:
            self.spawn(self._tick(race))

    async def _tick(self, race: Race) -> None:
        out = race.tick(self.clock())
        await self.apply(race, out)
        if race.status != "finished":
            self._schedule(race)

    async def apply(self, race: Race, out: Outcome, conn: Connection | None = None) -> None:
        """Make ``out`` durable, then send its reply and publish its events; the caller's task
        waits for the commit (for callers that send more messages of their own afterwards;
        the move path uses :meth:`record`, which does not wait).

        Nothing is sent before the commit: a reply a client sees is never lost by a crash.
        If the waiting task is cancelled the commit still happens (it is shielded) but this
        outcome's messages are not sent; clients resync from a snapshot.
        """
        if out.log:
            self.storage.append(out.log)
        if out.finished and race.finished_at is not None:
            self.storage.mark_finished(race.race, race.finished_at)
        if out.log or out.finished or self.storage.pending():
            # Even with nothing of its own to record, an outcome waits for what is queued
            # before it, so that messages leave in the order their commands came.
            await self.storage.flushed()
        self._emit(race, out, conn)

    def record(self, race: Race, out: Outcome, conn: Connection | None = None) -> None:
        """:meth:`apply` without waiting: queue ``out``'s log for this turn's commit and send
        its messages right after that commit (at once if nothing is queued). The caller goes
        on at once: a connection's next frame is read meanwhile, and replies still leave in
        order."""
        if out.log:
            self.storage.append(out.log)
        if out.finished and race.finished_at is not None:
            self.storage.mark_finished(race.race, race.finished_at)
        self.storage.after_commit(lambda: self._emit(race, out, conn))

    def _emit(self, race: Race, out: Outcome, conn: Connection | None) -> None:
        """Send a committed outcome: the reply, then the events, then what follows from them."""
        if conn is not None:
            for msg in out.reply:
                conn.send(msg)
        for throttle in self.board_throttles.values():
            if out.moved:
                throttle.mark(race.race, out.moved)
            if out.finished:
                throttle.send(race.race)  # the final boards go before race_over
        for msg in out.events:
            self.bus.publish(race.race, Event(msg))
        for player, msg in out.direct:
            self.bus.publish(race.race, Event(msg, to=player))
        if out.finished:
            self._retire(race)
        elif out.events:
            self._schedule(race)

    def send_boards(self, race_id: str, audience: str, players: set[str]) -> None:
        """Publish the latest board of ``players`` (racers of ``race_id``) as ``board`` views
        for ``audience``: "spectators" (and anyone else following the race) or "racers" (the
        race's racers, who see their opponents' boards; a racer's own comes with its state)."""
        race = self._in_memory(race_id)
        if race is None:
            return
        for player in sorted(players):
            self.bus.publish(race_id, Event(race.board_view(player), board=audience))

    def presence(self, race_id: str, player: str, delta: int) -> None:
        """Count one more (or one fewer) live connection for a racer; when it goes online or
        offline, tell the race with an unnumbered ``presence`` message."""
        race = self._in_memory(race_id)
        if race is None or player not in race.racers:
            return
        racer = race.racers[player]
        before = racer.connections > 0
        racer.connections = max(0, racer.connections + delta)
        if (racer.connections > 0) != before:
            self.bus.publish(race_id, Event({
                "type": "presence", "race": race_id, "player": player,
                "connected": racer.connections > 0,
            }))

    async def catch_up(self, race: Race) -> None:
        """Run transitions already due (the timer may not have fired yet)."""
        if race.status != "finished":
            deadline = race.next_deadline()
            if deadline is not None and deadline <= self.clock():
                await self.apply(race, race.tick(self.clock()))

    def new_race_id(self) -> str:
        while True:
            race_id = "".join(secrets.choice(RACE_ID_ALPHABET) for _ in range(8))
            if race_id not in self.races and not self.storage.exists(race_id):
                return race_id

    # ---------------------------------------------------------------- commands
    def play(self, conn: Connection, cmd: codec.Command) -> bool:
        """The hot path, without a coroutine: a move or an undo in a race held in memory
        whose next transition is not due. True when handled (refusals become ``error``
        replies here); False sends the command through :meth:`dispatch`."""
        if not isinstance(cmd, (codec.MoveCmd, codec.Undo)):
            return False
        race = self._in_memory(cmd.race)
        if race is None:
            return False
        now = self.clock()
        deadline = race.next_deadline()
        if deadline is not None and deadline <= now:
            return False
        try:
            player = conn.players.get(race.race)
            if isinstance(cmd, codec.MoveCmd):
                out = race.move(player, cmd.move, cmd.seq, now, cmd.rid)
            else:
                out = race.undo(player, cmd.seq, now, cmd.rid)
        except RaceError as exc:
            conn.send(codec.error(exc.code, exc.message, cmd.rid))
            return True
        except Exception:
            log.exception("command failed")
            conn.send(codec.error("internal", "the server failed on this message", cmd.rid))
            return True
        self.record(race, out, conn)
        return True

    async def dispatch(self, conn: Connection, cmd: codec.Command) -> None:
        """Run one command for ``conn``. Raises RaceError for a refused command."""
        now = self.clock()
        if isinstance(cmd, codec.Ping):
            conn.send({"type": "pong", "rid": cmd.rid, "now": now})
            return
        if isinstance(cmd, codec.Create):
            await self.create(conn, cmd, now)
            return
        race = self.lookup(cmd.race)
        await self.catch_up(race)
        now = self.clock()
        player = conn.players.get(race.race)
        if isinstance(cmd, codec.MoveCmd):
            self.record(race, race.move(player, cmd.move, cmd.seq, now, cmd.rid), conn)
        elif isinstance(cmd, codec.Undo):
            self.record(race, race.undo(player, cmd.seq, now, cmd.rid), conn)
        elif isinstance(cmd, codec.Join):
            await self.join(conn, race, cmd, now)
        elif isinstance(cmd, codec.Watch):
            conn.follow(race.race)
            conn.send(race.snapshot(None, now, cmd.rid))
        elif isinstance(cmd, codec.Leave):
            conn.unfollow(race.race)
            conn.send({"type": "ok", "rid": cmd.rid, "race": race.race})
        elif isinstance(cmd, codec.Start):
            out = race.start(cmd.token, now)
            out.reply.append({"type": "ok", "rid": cmd.rid, "race": race.race})
            await self.apply(race, out, conn)
        elif isinstance(cmd, codec.Ready):
            out = race.ready(player, now)
            out.reply.append({"type": "ok", "rid": cmd.rid, "race": race.race})
            await self.apply(race, out, conn)
        elif isinstance(cmd, codec.Resign):
            out = race.resign(player, now)
            out.reply.append({"type": "ok", "rid": cmd.rid, "race": race.race})
            await self.apply(race, out, conn)

    async def create(self, conn: Connection, cmd: codec.Create, now: int) -> None:
        if cmd.game not in solrules.GAMES:
            raise ProtocolError(
                "bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}", cmd.rid
            )
        if len(self.races) >= self.max_races:
            raise RaceError("limit_reached", "this server runs too many races; try later")
        seed = cmd.seed if cmd.seed is not None else secrets.randbits(64)
        race = Race(
            self.new_race_id(),
            cmd.game,
            seed,
            secrets.token_hex(16),
            Options(cmd.players, cmd.time_limit, cmd.undo),
            now,
            secrets.token_urlsafe(24),
            countdown_ms=self.countdown_ms,
        )
        self.races[race.race] = race
        self.storage.add_race(race)
        await self.storage.flushed()
        self._schedule(race)  # an abandoned lobby closes by itself
        conn.send(
            {
                "type": "created",
                "rid": cmd.rid,
                "race": race.race,
                "host_token": race.host_token,
                "commitment": race.commitment,
                "game": race.game,
                "options": race.options.as_dict(),
            }
        )

    async def join(self, conn: Connection, race: Race, cmd: codec.Join, now: int) -> None:
        """Join as a new racer (``name``) or resume one (``token``): ``joined``, ``snapshot``
        and, in a running race, the racer's ``state``."""
        bound = conn.players.get(race.race)
        if cmd.token is not None:
            racer = race.find_token(cmd.token)
            if racer is None:
                raise RaceError("forbidden", "unknown token for this race")
        elif bound is not None:
            racer = race.racers[bound]  # joining twice from one connection: same racer
        else:
            if len(conn.subs) >= MAX_SUBSCRIPTIONS and race.race not in conn.subs:
                raise RaceError(
                    "limit_reached", f"one connection follows at most {MAX_SUBSCRIPTIONS} races"
                )
            assert cmd.name is not None
            out = race.join(cmd.name, secrets.token_urlsafe(24), now)
            racer = race.racers[str(out.log[0].player)]
            await self.apply(race, out)
        conn.follow(race.race, boards=cmd.boards)
        if bound != racer.player:
            if bound is not None:
                self.presence(race.race, bound, -1)
            conn.players[race.race] = racer.player
            self.presence(race.race, racer.player, +1)
        now = self.clock()
        conn.send(
            {
                "type": "joined",
                "rid": cmd.rid,
                "race": race.race,
                "player": racer.player,
                "token": racer.token,
                "name": racer.name,
            }
        )
        conn.send(race.snapshot(racer.player, now))
        if race.status == "running":
            conn.send(race.state(racer.player))

    # ------------------------------------------------------------------- HTTP
    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        """HTTP routes on the WebSocket port. ``/ws`` goes on to the WebSocket handshake."""
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            return None
        try:
            return self.route(path)
        except Exception:
            log.exception("HTTP %s failed", path)
            return json_response(500, {"error": "internal"})

    def route(self, path: str) -> Response:
        if path == "/healthz":
            return response(200, b"ok", "text/plain; charset=utf-8")
        if path == "/api/games":
            games = [{"game": g, "title": solrules.TITLES.get(g, g)} for g in solrules.GAMES]
            return json_response(200, games)
        parts = [p for p in path.split("/") if p]
        if path == "/" or (parts and parts[0] in ("race", "tournament") and len(parts) <= 3):
            return self.static("index.html")
        if parts and parts[0] == "static" and len(parts) > 1:
            return self.static("/".join(parts[1:]))
        if len(parts) == 3 and parts[:2] == ["api", "races"]:
            race = self._race_or_none(parts[2])
            if race is None:
                return json_response(404, {"error": "not_found"})
            return json_response(200, race.summary())
        if len(parts) == 5 and parts[:2] == ["api", "races"] and parts[3] == "replay":
            return self.replay(parts[2], parts[4])
        return json_response(404, {"error": "not_found"})

    def _race_or_none(self, race_id: str) -> Race | None:
        try:
            return self.lookup(race_id)
        except RaceError:
            return None

    def replay(self, race_id: str, player: str) -> Response:
        race = self._race_or_none(race_id)
        if race is None or player not in race.racers:
            return json_response(404, {"error": "not_found"})
        if race.status != "finished":
            return json_response(403, {"error": "forbidden", "message": "race not finished"})
        racer = race.racers[player]
        game = solrules.new_game(race.game, race.seed)
        boards = [game.board(reveal=False)]
        for action in racer.actions:
            if action == "undo":
                game.pop()
            else:
                game.push(solrules.Move.from_text(action))
            boards.append(game.board(reveal=False))
        body = {
            "race": race.race,
            "player": player,
            "name": racer.name,
            "moves": list(racer.actions),
            "boards": boards,
        }
        return json_response(200, body)

    def static(self, rel: str) -> Response:
        root = self.client.resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return json_response(404, {"error": "not_found"})
        ctype = CONTENT_TYPES.get(target.suffix.lower())
        if ctype is None:
            return json_response(404, {"error": "not_found"})
        return response(200, target.read_bytes(), ctype)

    # ------------------------------------------------------------- serving
    async def handler(self, ws: ServerConnection) -> None:
        await Connection(self, ws).run()

    def serve(self, host: str, port: int) -> Any:
        """``websockets`` server context for this app (use ``async with``)."""
        return serve(
            self.handler,
            host,
            port,
            process_request=self.process_request,
            compression=None,
            max_size=4 * codec.MAX_FRAME,  # beyond codec.MAX_FRAME: error; beyond this: close
            max_queue=16,
            write_limit=WRITE_LIMIT,
        )


def response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("Cache-Control", "no-cache"),
        ]
    )
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def json_response(status: int, obj: Any) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return response(status, body, "application/json")


async def run_server(
    app: App, host: str, port: int, ready: Callable[[Server], None] | None = None
) -> None:
    """Serve until cancelled (the CLI cancels on SIGINT/SIGTERM), then close cleanly: stop
    accepting, close connections with 1001, commit what is queued."""
    app.recover()
    try:
        async with app.serve(host, port) as server:
            if ready is not None:
                ready(server)
            await server.serve_forever()
    finally:
        app.close()
