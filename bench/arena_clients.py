"""The clients of ``bench/arena_bench.py``: an arena's entrants, many to a process, and its
watchers.

An **entrant** is a browser on the arena's page as the server sees it: a guest (a cookie from
``GET /``, a name), from an address of its own (``X-Forwarded-For``), one socket (batch frames),
on one of the two processes. It joins the arena (``arena_join``) and then, race after race:
on ``paired`` it leaves the race before (as the race page it navigates away from does) and takes
its seat (``join {race, token}``); once the race runs it makes a random legal move every
``think`` seconds (human-paced: the fair-play rules flag machine speed) and, ``race`` seconds
after the start, resigns unless its opponent resigned first (its first move comes before that:
a racer who made no move would be paused); then it waits to be paired again. Every message is
stamped with ``time.monotonic()`` when its frame arrived (the clock of every process on the
machine, so the main process compares stamps across workers). Frames holding only the table
sent to every follower are dropped undecoded: an entrant has no use for them here.

When its socket closes (its process was killed) it reconnects at once to the other process, as
a browser behind nginx would land on a live one, sends ``arena_join`` again and takes its seat
again if its race is not over (a command answered ``unavailable`` is sent again after 50 ms, as
the browser does). A race that ended while it was away is read from the ``snapshot`` its seat
gives back.

At ``stop`` each entrant pauses (``arena_pause``), resigns the race it is in, and waits a few
seconds for a ``paired`` that crossed the pause (it takes that seat and resigns too).

Run by ``arena_bench.py`` as ``python bench/arena_clients.py CONFIG.json``: it makes the
identities and prints ``ready``; reads ``join ARENA`` on stdin, joins every entrant and prints
``joined``; reads ``stop`` and, once every entrant stopped, writes its results to the config's
``out`` (JSON) and prints ``done``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import resource
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient, ServerError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

sys.path.insert(0, str(Path(__file__).parent))
from pairing_bench import page_cookie
from race_bench import pct

Message = dict[str, Any]
#: What an entrant reads: replies, its board, its seats, a race's end (and what it becomes after
#: a reconnect). Every other frame (the arena's table and view, the opponent's board) is
#: dropped undecoded.
ENTRANT_WANTS = (b'"rid"', b'"state"', b'"paired"', b'"race_over"', b'"snapshot"')
#: Seconds an entrant that stopped waits for a ``paired`` that crossed its pause.
SETTLE = 3.0
#: Sends of one command that fail (closed socket, ``unavailable``, no answer) before it gives up.
ATTEMPTS = 40


class Client(RaceClient):
    """A :class:`RaceClient` whose messages go to ``sink`` instead of a queue, each stamped
    with the arrival of its frame (``_at``, monotonic seconds), replies included. ``wanted``:
    frames with none of these bytes are dropped undecoded (None: every frame is read).
    ``on_close(client)`` is called once the socket is gone."""

    def __init__(self, ws: ClientConnection, sink: Callable[[Message], None],
                 wanted: tuple[bytes, ...] | None,
                 on_close: Callable[[Client], None] | None = None) -> None:
        self.sink = sink
        self.wanted = wanted
        self.on_close = on_close
        super().__init__(ws, keep_events=False)

    @classmethod
    async def open(cls, addr: str, headers: dict[str, str], sink: Callable[[Message], None],
                   wanted: tuple[bytes, ...] | None,
                   on_close: Callable[[Client], None] | None = None) -> Client:
        ws = await connect(f"ws://{addr}/ws?batch=1", additional_headers=headers,
                           compression=None, max_size=2**22, open_timeout=10)
        return cls(ws, sink, wanted, on_close)

    async def _read(self) -> None:
        try:
            while True:
                frame = await self.ws.recv(decode=False)
                at = time.monotonic()
                if self.wanted is not None and not any(w in frame for w in self.wanted):
                    continue
                for msg in self.decode(frame):
                    msg["_at"] = at
                    self._route(msg)
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            self._state_seen.set()
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
                    fut.exception()
            self._pending.clear()
            if self.on_close is not None:
                self.on_close(self)

    def _route(self, msg: Message) -> None:
        rid = msg.get("rid")
        fut = self._pending.pop(rid, None) if rid is not None else None
        if fut is not None and not fut.done():
            fut.set_result(msg)
        else:
            self.sink(msg)


@dataclass
class Seat:
    """One race of an entrant, as he saw it (monotonic seconds)."""

    race: str
    slot: str  # his racer in it ("p1", "p2")
    token: str
    paired_at: float
    started_at: float | None = None
    moves: int = 0
    resigned_at: float | None = None  # his resign's reply
    end_at: float | None = None  # he first knew the race was over
    via: str = ""  # how: "resign", "race_over" or "snapshot" (after a reconnect)
    outcome: str = ""  # "W", "L", "D"
    next_paired_at: float | None = None  # his next seat's paired


@dataclass
class EntrantReport:
    name: str
    player: str
    home: int  # the process he first connected to (0: A, 1: B)
    seats: list[Seat]
    reconnects: list[tuple[float, float]] = field(default_factory=list)  # (lost, back)
    errors: list[str] = field(default_factory=list)


class Browser:
    """One socket on one of the two processes (``addrs[at]``), reconnected to the other one
    when it closes (see the module docstring); :meth:`rejoin` says what to send again then."""

    def __init__(self, addrs: list[str], home: int, wanted: tuple[bytes, ...] | None) -> None:
        self.addrs = addrs
        self.at = home
        self.wanted = wanted
        self.headers: dict[str, str] = {}
        self.client: Client | None = None
        self.connected = asyncio.Event()
        #: Set while a socket is open and what it must send again on it (rejoin) was answered:
        #: a resign sent on a new socket before its join would be refused (not bound to his
        #: seat yet), and his race would go on to its time limit.
        self.rejoined = asyncio.Event()
        self.reconnects: list[tuple[float, float]] = []  # (lost, back), monotonic
        self.errors: list[str] = []
        self.done = False
        self._tasks: set[asyncio.Task[Any]] = set()

    def on_message(self, msg: Message) -> None:
        raise NotImplementedError

    async def rejoin(self) -> None:
        """What to send again on a new socket."""

    async def _open(self) -> None:
        self.client = await Client.open(self.addrs[self.at], self.headers, self.on_message,
                                        self.wanted, self._closed)
        self.connected.set()

    def _closed(self, client: Client) -> None:
        if client is self.client and not self.done:
            self.connected.clear()
            self.rejoined.clear()
            task = asyncio.create_task(self._reconnect())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _reconnect(self) -> None:
        lost = time.monotonic()
        delay = 0.05
        while not self.done:
            self.at = 1 - self.at  # the other process: a browser behind nginx lands on a live one
            try:
                await self._open()
                break
            except (OSError, InvalidHandshake, TimeoutError) as exc:
                self.errors.append(f"reconnect: {type(exc).__name__}")
                await asyncio.sleep(delay)
                delay = min(1.0, delay * 2)
        try:
            await self.rejoin()
        except Exception as exc:
            self.errors.append(f"rejoin: {type(exc).__name__}: {exc}")
        self.reconnects.append((lost, time.monotonic()))
        self.rejoined.set()

    async def call(self, msg: Message, timeout: float = 20.0, rejoining: bool = False
                   ) -> Message:
        """``msg``'s reply; sent again on a closed socket (once reconnected and, unless it
        is one of the messages that rejoin, once they are answered: a move or a resign sent
        in between is refused, the racer not seated again yet), on ``unavailable`` (after 50
        ms) and after ``timeout`` without an answer."""
        for _ in range(ATTEMPTS):
            await (self.connected if rejoining else self.rejoined).wait()
            client = self.client
            assert client is not None
            try:
                return await client.request(msg, timeout=timeout)
            except ServerError as exc:
                if exc.code != "unavailable":
                    raise
                await asyncio.sleep(0.05)
            except (ConnectionError, ConnectionClosed, TimeoutError) as exc:
                if client is self.client and (client.closed or isinstance(exc, ConnectionClosed)):
                    self.connected.clear()  # its reader ends, and _closed reconnects
                await asyncio.sleep(0.01)
        raise TimeoutError(f"{msg['type']}: no answer after {ATTEMPTS} attempts")

    async def close(self) -> None:
        self.done = True
        for task in list(self._tasks):
            task.cancel()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()


class Watcher(Browser):
    """A page showing the arena's table (``arena_watch``): ``got`` holds (arrival, ``v``,
    type) of every ``arena_standings``, ``arena`` and ``arena_over`` of it."""

    def __init__(self, addrs: list[str], home: int, forwarded: str, aid: str) -> None:
        super().__init__(addrs, home, None)
        self.headers = {"X-Forwarded-For": forwarded}
        self.aid = aid
        self.got: list[tuple[float, int, str]] = []

    async def start(self) -> None:
        await self._open()
        self.rejoined.set()  # the first socket: nothing to send again
        await self.rejoin()

    async def rejoin(self) -> None:
        await self.call({"type": "arena_watch", "arena": self.aid}, rejoining=True)

    def on_message(self, msg: Message) -> None:
        if msg.get("arena") == self.aid and msg.get("type") in (
                "arena_standings", "arena", "arena_over"):
            self.got.append((msg["_at"], msg["v"], msg["type"]))


class Entrant(Browser):
    """See the module docstring."""

    def __init__(self, name: str, forwarded: str, addrs: list[str], home: int,
                 race_s: tuple[float, float], think_s: tuple[float, float], seed: int) -> None:
        super().__init__(addrs, home, ENTRANT_WANTS)
        self.name = name
        self.forwarded = forwarded
        self.report = EntrantReport(name, "", home, [], self.reconnects, self.errors)
        self.race_s = race_s
        self.think_s = think_s
        self.rng = random.Random(seed)
        self.wake = asyncio.Event()
        self.paired: deque[Message] = deque()
        self.states: dict[str, Message] = {}
        self.over: dict[str, tuple[list[Message], float, str]] = {}
        self.seats: dict[str, Seat] = {}
        self.current: Seat | None = None
        self.aid = ""
        self.stopping = False
        self.paused = asyncio.Event()

    async def make(self) -> None:
        """A browser's first visit: the cookie, the socket, a name (a guest player)."""
        key = await page_cookie(self.addrs[self.at], self.forwarded)
        self.headers = {"Cookie": f"sr_player={key}", "X-Forwarded-For": self.forwarded}
        await self._open()
        self.rejoined.set()  # the first socket: nothing to send again
        me = await self.call({"type": "set_name", "name": self.name})
        self.report.player = me["player"]["id"]

    async def rejoin(self) -> None:
        if self.aid:
            await self.call({"type": "arena_join", "arena": self.aid}, rejoining=True)
        seat = self.current
        if seat is not None and seat.race not in self.over:
            await self._sit(seat, rejoining=True)
        self.wake.set()

    # ------------------------------------------------------------------ messages
    def on_message(self, msg: Message) -> None:
        kind = msg.get("type")
        if kind == "paired":
            if msg.get("arena") == self.aid:
                self.paired.append(msg)
                self.wake.set()
        elif kind == "state":
            self._state(msg)
        elif kind == "race_over":
            self._over(msg["race"], msg["standings"], msg["_at"], "race_over")
        elif kind == "snapshot" and msg.get("status") == "finished":
            self._over(msg["race"], msg["players"], msg["_at"], "snapshot")

    def _state(self, msg: Message) -> None:
        known = self.states.get(msg["race"])
        if known is None or msg["seq"] >= known["seq"]:
            self.states[msg["race"]] = msg
        self.wake.set()

    def _over(self, race: str, rows: list[Message], at: float, via: str) -> None:
        if race not in self.over:
            self.over[race] = (rows, at, via)
            self.wake.set()

    async def _until(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``ready()`` (checked at each message, stop or reconnect)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not ready():
            self.wake.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self.wake.wait()
        return True

    # ------------------------------------------------------------------ the arena
    async def join(self, aid: str) -> None:
        self.aid = aid
        await self.call({"type": "arena_join", "arena": aid})

    async def run(self) -> None:
        """Race after race until stopped (see the module docstring)."""
        try:
            while True:
                if not self.paired:
                    if self.stopping:
                        await self.paused.wait()
                        if not await self._until(lambda: bool(self.paired), SETTLE):
                            break
                    else:
                        await self._until(lambda: bool(self.paired) or self.stopping, 3600)
                        continue
                msg = self.paired.popleft()
                race = msg["race"]
                if race in self.seats:
                    continue  # his seat told again (he came back): _reconnect sits
                seat = Seat(race, msg["player"], msg["token"], msg["_at"])
                before = self.current
                if before is not None:
                    before.next_paired_at = seat.paired_at
                    if self.client is not None and not self.client.closed:
                        with contextlib.suppress(Exception):  # the page he leaves
                            await self.client.send({"type": "leave", "race": before.race})
                self.current = seat
                self.seats[race] = seat
                self.report.seats.append(seat)
                await self._race(seat)
        except Exception as exc:  # a bench client never takes the worker down
            self.errors.append(f"{type(exc).__name__}: {exc}")

    async def _sit(self, seat: Seat, rejoining: bool = False) -> None:
        try:
            await self.call({"type": "join", "race": seat.race, "token": seat.token},
                            rejoining=rejoining)
        except ServerError as exc:
            self.errors.append(f"join {seat.race}: {exc.code}")

    async def _race(self, seat: Seat) -> None:
        race = seat.race
        await self._sit(seat)
        await self._until(lambda: race in self.states or race in self.over, 60)
        seat.started_at = time.monotonic()
        if race not in self.over and not self.stopping:
            resign_at = seat.started_at + self.rng.uniform(*self.race_s)
            move_at = seat.started_at + self.rng.uniform(*self.think_s)
            while race not in self.over and not self.stopping:
                now = time.monotonic()
                if seat.moves and now >= resign_at:
                    break
                due = min(move_at, resign_at) if seat.moves else move_at
                await self._until(lambda: race in self.over or self.stopping, due - now)
                if race in self.over or self.stopping:
                    break
                if time.monotonic() >= move_at:
                    await self._move(seat)
                    move_at = time.monotonic() + self.rng.uniform(*self.think_s)
        refused = ""
        if race not in self.over:
            try:
                reply = await self.call({"type": "resign", "race": race})
                seat.resigned_at = reply["_at"]
            except ServerError as exc:  # over already: the opponent resigned first
                refused = f" (his resign: {exc.code})"
        if not await self._until(lambda: race in self.over, 60):
            self.errors.append(f"{race}: no race_over{refused}")
            return
        rows, at, via = self.over[race]
        if seat.resigned_at is not None and seat.resigned_at < at:
            at, via = seat.resigned_at, "resign"
        seat.end_at, seat.via = at, via
        seat.outcome = outcome(rows, seat.slot)
        self.states.pop(race, None)

    async def _move(self, seat: Seat) -> None:
        state = self.states.get(seat.race)
        legal = state.get("legal") if state is not None else None
        if not legal:
            return
        assert state is not None
        try:
            reply = await self.call({"type": "move", "race": seat.race,
                                     "move": self.rng.choice(legal), "seq": state["seq"] + 1})
        except ServerError:
            return  # the race ended meanwhile, or the state was stale
        self._state(reply)
        seat.moves += 1

    async def stop(self) -> None:
        self.stopping = True
        self.wake.set()
        try:
            await self.call({"type": "arena_pause", "arena": self.aid})
        except Exception as exc:
            self.errors.append(f"pause: {type(exc).__name__}: {exc}")
        self.paused.set()



def outcome(rows: list[Message], slot: str) -> str:
    """``W``, ``L`` or ``D`` for racer ``slot`` from a race's final rows (``race_over``'s
    standings or a finished snapshot's players)."""
    mine = next(r for r in rows if r["player"] == slot)
    other = next(r for r in rows if r["player"] != slot)
    if mine.get("resigned"):
        return "L"
    if other.get("resigned"):
        return "W"
    if mine.get("place") == 1:
        return "D" if other.get("place") == 1 else "W"
    return "L"


def points(outcomes: list[str]) -> int:
    """An entrant's points from his results in order (docs/protocol.md, "Arenas"): a win 2, a
    shared first place 1, a loss 0; a win after two wins in a row 4."""
    total = streak = 0
    for o in outcomes:
        if o == "W":
            streak += 1
            total += 4 if streak > 2 else 2
        else:
            streak = 0
            total += 1 if o == "D" else 0
    return total


# ---------------------------------------------------------------------- the worker
async def lag_probe(samples: list[float], every: float = 0.05) -> None:
    """How late this process's loop wakes up (the bench's own lag), every ``every`` s."""
    loop = asyncio.get_running_loop()
    while True:
        t = loop.time()
        await asyncio.sleep(every)
        samples.append(loop.time() - t - every)


async def line() -> str:
    return (await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)).strip()


async def worker(cfg: dict[str, Any]) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    addrs = cfg["addrs"]
    entrants = [Entrant(f"{cfg['prefix']}{i:04d}", f"10.{cfg['net']}.{i // 250}.{i % 250 + 1}",
                        addrs, i % 2, tuple(cfg["race"]), tuple(cfg["think"]), cfg["seed"] + i)
                for i in cfg["indices"]]
    gate = asyncio.Semaphore(32)

    async def gated(coro: Any) -> None:
        async with gate:
            await coro

    await asyncio.gather(*(gated(e.make()) for e in entrants))
    print("ready", flush=True)
    command, _, aid = (await line()).partition(" ")
    assert command == "join", command
    await asyncio.gather(*(gated(e.join(aid)) for e in entrants))
    runs = [asyncio.create_task(e.run()) for e in entrants]
    lags: list[float] = []
    probe = asyncio.create_task(lag_probe(lags))
    cpu0, wall0 = time.process_time(), time.monotonic()
    print("joined", flush=True)
    command = await line()
    assert command == "stop", command
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    lag_run = list(lags)
    await asyncio.gather(*(e.stop() for e in entrants))
    await asyncio.wait(runs, timeout=90)
    probe.cancel()
    out = {"entrants": [asdict(e.report) for e in entrants],
           "cpu": cpu, "wall": wall,
           "lag": {"p50": pct(lag_run, 0.5), "p99": pct(lag_run, 0.99),
                   "max": max(lag_run, default=0.0), "samples": len(lag_run)},
           "unfinished": sum(1 for r in runs if not r.done())}
    Path(cfg["out"]).write_text(json.dumps(out))
    await asyncio.gather(*(e.close() for e in entrants))
    print("done", flush=True)


if __name__ == "__main__":
    config = json.loads(Path(sys.argv[1]).read_text())
    try:
        import uvloop
        uvloop.run(worker(config))
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
        asyncio.run(worker(config))
