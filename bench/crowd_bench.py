"""A crowd on one race: solrace's fan-out to thousands of spectators against a bare
``websockets.broadcast()`` server, in one run (issue 31, goal 3).

    .venv/bin/python bench/crowd_bench.py        # --spectators 5000 --moves 40 --clients 5
    .venv/bin/python bench/crowd_bench.py --against tree:/work/wt/crowd-before

The spectators are raw sockets (an HTTP upgrade, then WebSocket frames parsed by hand; pings
answered) in ``--clients`` subprocesses, so that 5,000 of them fit beside the server on two
cores. Each server is measured in turn with the same spectators:

- **bare**: a websockets server (``compression=None``, uvloop) whose control connection sends
  "move k"; it answers, then ``broadcast()``s one progress-sized frame to every spectator.
- **solrace** (this tree, and ``--against tree:PATH``): a race of two; one racer moves (a move
  or an undo, alternately) and waits for its ``state``; the spectators ``watch`` it over
  ``/ws?batch=1`` as the browser does (``--no-batch``: one message per frame).

Moves are paced ``--gap`` seconds apart (more than the spectators' board interval, 100 ms, so
each move's board is due at once, as for a person playing). Per server: CPU of its process per
move per spectator (over the rounds, from /proc), WebSocket frames per spectator per move (all
frames the spectators got during the rounds and ``--gap`` after), the time from the move sent
to the last spectator's copy of its progress (p50, p90; clocks are CLOCK_MONOTONIC, shared by
the processes), spectators dropped, and for solrace the racer's own round trip with and
without the spectators. The ratios are the goals': CPU and last copy against bare, round trip
against the same server without spectators.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from race_bench import cpu_seconds, pct, start

#: The progress value of each move in a frame: in solrace's ``progress`` event and in the
#: bare server's frame of the same shape and size.
MOVES = re.compile(rb'"type":"progress".*?"moves":(\d+)')


def bare_frame(k: int) -> bytes:
    return orjson.dumps({"type": "progress", "race": "js251oq9k2", "v": k + 6, "player": "p1",
                         "progress": {"foundation": 3, "total": 52, "moves": k}})


# --------------------------------------------------------------------------- spectators
class Spectator(asyncio.Protocol):
    """One raw WebSocket client: upgrade, optional first message, then count frames."""

    def __init__(self, crowd: Crowd, first: bytes) -> None:
        self.crowd = crowd
        self.first = first
        self.buf = b""
        self.upgraded = False
        self.transport: asyncio.Transport | None = None
        self.seen = 0  # highest move seen
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.crowd.request)

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buf = buf
                return
            if not buf.startswith(b"HTTP/1.1 101"):
                self.opened.set_exception(ConnectionError(buf[:80].decode("latin-1")))
                return
            self.upgraded = True
            buf = buf[end + 4:]
            if self.first:
                assert self.transport is not None
                self.transport.write(masked(0x81, self.first))
            self.opened.set_result(None)
        pos, n = 0, len(buf)
        while n - pos >= 2:
            op, ln = buf[pos], buf[pos + 1] & 0x7F
            head = 2
            if ln == 126:
                if n - pos < 4:
                    break
                ln, head = int.from_bytes(buf[pos + 2:pos + 4], "big"), 4
            elif ln == 127:
                if n - pos < 10:
                    break
                ln, head = int.from_bytes(buf[pos + 2:pos + 10], "big"), 10
            if n - pos < head + ln:
                break
            payload = buf[pos + head:pos + head + ln]
            pos += head + ln
            self.frame(op & 0x0F, payload)
        self.buf = buf[pos:]

    def frame(self, op: int, payload: bytes) -> None:
        crowd = self.crowd
        if op == 0x9:  # ping: pong, or the server gives the socket up
            assert self.transport is not None
            self.transport.write(masked(0x8A, payload))
            return
        if op == 0x8:
            return
        if not crowd.counting:
            return
        crowd.frames += 1
        for m in MOVES.finditer(payload):
            k = int(m.group(1))
            if k > self.seen:
                self.seen = k
                crowd.got(k)

    def connection_lost(self, exc: Exception | None) -> None:
        self.crowd.closed += 1
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed before the upgrade"))


def masked(opcode: int, payload: bytes) -> bytes:
    """A client frame with a zero mask (the key is sent; XOR with zeros leaves the bytes)."""
    n = len(payload)
    head = bytes((0x80 | opcode, 0x80 | n)) if n < 126 else \
        bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    return head + b"\0\0\0\0" + payload


class Crowd:
    """This client process's spectators; reports each move once all of them have it."""

    def __init__(self, host: str, port: int, path: str, count: int) -> None:
        self.host, self.port, self.count = host, port, count
        self.request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode()
        self.frames = 0
        self.closed = 0
        self.counting = False
        self.have: dict[int, int] = {}

    def got(self, k: int) -> None:
        now = time.monotonic()
        have = self.have[k] = self.have.get(k, 0) + 1
        if have == self.count:
            print(f"got {k} {now:.6f}", flush=True)
            del self.have[k]

    async def run(self, first: bytes) -> None:
        loop = asyncio.get_running_loop()
        spectators: list[Spectator] = []
        for i in range(0, self.count, 100):
            batch = [Spectator(self, first) for _ in range(min(100, self.count - i))]
            for s in batch:
                await loop.create_connection(lambda s=s: s, self.host, self.port)  # type: ignore[misc]
            await asyncio.gather(*(s.opened for s in batch))
            spectators += batch
        await asyncio.sleep(0.5)  # the snapshots answering ``watch``
        print("ready", flush=True)
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := (await reader.readline()).decode().strip():
            if line == "count":
                self.frames, self.counting = 0, True
            elif line == "stop":
                self.counting = False
                missing = sorted(self.have)
                print(f"done {self.frames} {self.closed} {len(missing)}", flush=True)
        for s in spectators:
            if s.transport is not None:
                s.transport.close()


def client_main(args: argparse.Namespace) -> None:
    host, port = args.client_addr.rsplit(":", 1)
    crowd = Crowd(host, int(port), args.client_path, args.client_count)
    run(crowd.run(args.client_first.encode()))


def run(coro: Any) -> None:
    try:
        import uvloop
        uvloop.run(coro)
    except ImportError:
        asyncio.run(coro)


class Clients:
    """The client subprocesses, driven over their stdin and stdout."""

    def __init__(self) -> None:
        self.procs: list[asyncio.subprocess.Process] = []
        self.lines: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
        self.readers: list[asyncio.Task[None]] = []

    async def open(self, addrs: list[str], path: str, first: bytes, total: int, n: int
                   ) -> None:
        """``n`` client processes, ``total`` spectators in all, each process on one of
        ``addrs`` in turn."""
        for i in range(n):
            addr = addrs[i % len(addrs)]
            count = total // n + (1 if i < total % n else 0)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--client-addr", addr, "--client-path", path,
                "--client-count", str(count), "--client-first", first.decode(),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self.procs.append(proc)
            self.readers.append(asyncio.create_task(self._read(i, proc)))
        for _ in self.procs:
            await self.expect("ready", 120)

    async def _read(self, i: int, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            await self.lines.put((i, line.decode().strip()))

    async def expect(self, word: str, timeout: float) -> tuple[int, list[str]]:
        while True:
            i, line = await asyncio.wait_for(self.lines.get(), timeout)
            parts = line.split()
            if parts and parts[0] == word:
                return i, parts[1:]

    def tell(self, line: str) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write(f"{line}\n".encode())

    async def last_copy(self, k: int, timeout: float) -> float | None:
        """When the last client process had move ``k`` on every one of its spectators."""
        last, waiting = 0.0, len(self.procs)
        stop = time.monotonic() + timeout
        try:
            while waiting:
                _, rest = await self.expect("got", max(0.01, stop - time.monotonic()))
                if int(rest[0]) == k:
                    last, waiting = max(last, float(rest[1])), waiting - 1
        except TimeoutError:
            return None
        return last

    async def done(self) -> tuple[int, int, int]:
        self.tell("stop")
        frames = closed = missing = 0
        for _ in self.procs:
            _, rest = await self.expect("done", 30)
            frames += int(rest[0])
            closed += int(rest[1])
            missing += int(rest[2])
        return frames, closed, missing

    async def close(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
        for task in self.readers:
            task.cancel()


# --------------------------------------------------------------------------- bare server
async def bare_server() -> None:
    from websockets.asyncio.server import ServerConnection, broadcast, serve

    spectators: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        if ws.request is not None and ws.request.path == "/control":
            async for message in ws:
                k = int(message)
                await ws.send(b"ok", text=True)  # the mover's answer first, as solrace does
                broadcast(spectators, bare_frame(k).decode())
            return
        spectators.add(ws)
        try:
            await ws.wait_closed()
        finally:
            spectators.discard(ws)

    async with serve(handler, "127.0.0.1", 0, compression=None, max_size=2**16,
                     backlog=1024) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"bare serving http://127.0.0.1:{port}/", flush=True)
        await server.serve_forever()


# --------------------------------------------------------------------------------- rounds
class Result:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cpu_per = 0.0  # seconds per move per spectator
        self.frames_per = 0.0
        self.last: list[float] = []
        self.dropped = 0
        self.missing = 0
        self.rtt_alone: list[float] = []
        self.rtt_crowd: list[float] = []


async def rounds(clients: Clients, pids: list[int], moves: int, gap: float, spectators: int,
                 move: Any, result: Result) -> None:
    """``moves`` moves ``gap`` apart: ``move(k)`` sends move k and returns the round trip."""
    clients.tell("count")
    await asyncio.sleep(0.2)
    cpu0 = sum(map(cpu_seconds, pids))
    for k in range(1, moves + 1):
        sent = time.monotonic()
        rtt, marker = await move(k)
        result.rtt_crowd.append(rtt)
        last = await clients.last_copy(marker, 10.0)
        if last is not None:
            result.last.append(last - sent)
        await asyncio.sleep(max(0.0, sent + gap - time.monotonic()))
    await asyncio.sleep(gap)  # the last board
    cpu = sum(map(cpu_seconds, pids)) - cpu0
    frames, closed, missing = await clients.done()
    result.cpu_per = cpu / moves / spectators
    result.frames_per = frames / moves / spectators
    result.dropped = closed
    result.missing = missing


async def measure_bare(args: argparse.Namespace) -> Result:
    from websockets.asyncio.client import connect

    result = Result("bare broadcast()")
    proc, addr = start([sys.executable, __file__, "--bare-server"])
    try:
        clients = Clients()
        await clients.open([addr], "/spectate", b"", args.spectators, args.clients)
        async with connect(f"ws://{addr}/control", compression=None) as control:
            async def move(k: int) -> tuple[float, int]:
                t = time.perf_counter()
                await control.send(str(k))
                await control.recv()
                return time.perf_counter() - t, k

            await rounds(clients, [proc.pid], args.moves, args.gap, args.spectators, move, result)
        await clients.close()
    finally:
        proc.terminate()
        proc.wait()
    return result


async def measure_solrace(args: argparse.Namespace, name: str, tree: Path | None,
                          processes: int = 1) -> Result:
    """One solrace process, or ``processes`` on one Redis: the racers on the first, the
    spectators spread over all of them (CPU is the sum of the processes')."""
    from cluster_bench import redis_server
    from solrace.tools.race_client import RaceClient

    result = Result(name)
    env = None if tree is None else {**os.environ,
                                    "PYTHONPATH": f"{tree}/shared:{tree}/server"}
    tmp = tempfile.mkdtemp(prefix="crowd-bench-")
    procs: list[subprocess.Popen[Any]] = []
    on_redis: list[str] = []
    if processes > 1:
        rproc, rport = redis_server(tmp)
        procs.append(rproc)
        on_redis = ["--redis", f"redis://127.0.0.1:{rport}/0"]
    addrs = []
    for n in range(processes):
        proc, addr = start([sys.executable, "-m", "solrace", "serve", "--port", "0",
                            "--db", f"{tmp}/crowd{n}.db", "--rate-limit", "0", "--countdown",
                            "0", "--par-seconds", "0", "--hint-seconds", "0", "--pool", "0",
                            "--connections-per-address", "1000000",
                            "--max-connections", "1000000", *on_redis], env)
        procs.insert(n, proc)
        addrs.append(addr)
    addr = addrs[0]
    try:
        host = await RaceClient.connect(f"ws://{addr}/ws")
        created = await host.create("scotch", players=2, seed=4242, time_limit=86400)
        race = created["race"]
        racers = []
        for i in range(2):
            c = await RaceClient.connect(f"ws://{addr}/ws")
            joined = await c.join(race, name=f"racer{i}")
            racers.append((c, joined["player"]))
        await host.start(race, created["host_token"])
        mover = racers[0][0]
        state = await mover.wait_state(race, 30)
        ws = await mover.detach()

        async def move(k: int) -> tuple[float, int]:
            nonlocal state
            seq = state["seq"] + 1
            if seq % 2 == 0:
                msg: dict[str, Any] = {"type": "undo", "race": race, "seq": seq, "rid": seq}
            else:
                legal = [m for m in state["legal"] if not m.startswith("f")] or state["legal"]
                msg = {"type": "move", "race": race, "move": legal[0], "seq": seq, "rid": seq}
            t = time.perf_counter()
            await ws.send(orjson.dumps(msg), text=True)
            while True:
                frame = await ws.recv(decode=False)
                if b'"state"' not in frame:
                    continue
                obj = orjson.loads(frame)
                for m in obj if isinstance(obj, list) else (obj,):
                    if m.get("rid") == seq:
                        state = m
                        return time.perf_counter() - t, seq

        # The racer alone (the same pace), then with the crowd.
        for _ in range(args.moves):
            t = time.perf_counter()
            result.rtt_alone.append((await move(0))[0])
            await asyncio.sleep(max(0.0, t + args.gap - time.perf_counter()))
        clients = Clients()
        path = "/ws" if args.no_batch else "/ws?batch=1"
        watch = orjson.dumps({"type": "watch", "race": race})
        await clients.open(addrs, path, watch, args.spectators, args.clients)
        await rounds(clients, [p.pid for p in procs[:processes]], args.moves, args.gap,
                     args.spectators, move, result)
        await clients.close()
        await ws.close()
        for c, _ in racers[1:]:
            await c.close()
        await host.close()
    finally:
        for proc in procs:  # Redis last: the others would log its absence
            proc.terminate()
            proc.wait()
    return result


def ms(values: list[float], q: float) -> str:
    return f"{pct(values, q) * 1000:.1f}" if values else "-"


async def main(args: argparse.Namespace) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args.spectators + 1000:
        raise SystemExit(f"the fd limit ({hard}) is too low for {args.spectators} spectators")
    print(f"{args.spectators} spectators in {args.clients} client processes, {args.moves} moves "
          f"{args.gap * 1000:.0f} ms apart, {'one message a frame' if args.no_batch else 'batch=1'}"
          f"; load {Path('/proc/loadavg').read_text().split()[:3]}", flush=True)
    results = []
    for _ in range(args.rounds):
        results.append(await measure_bare(args))
        results.append(await measure_solrace(args, "solrace (this tree)", None))
        for against in args.against:
            tree = Path(against.removeprefix("tree:")).resolve()
            results.append(await measure_solrace(args, f"solrace ({tree})", tree))
        if args.processes > 1:
            results.append(await measure_solrace(
                args, f"solrace, {args.processes} processes on Redis", None, args.processes))
            for against in args.against:
                tree = Path(against.removeprefix("tree:")).resolve()
                results.append(await measure_solrace(
                    args, f"{args.processes} processes ({tree})", tree, args.processes))
    bare = [r for r in results if r.name.startswith("bare")]
    base_cpu = statistics.median(r.cpu_per for r in bare)
    base_last = statistics.median(pct(r.last, 0.5) for r in bare)
    print("\n| server | CPU µs per move per spectator | x bare | frames per spectator per move "
          "| last copy p50 / p90 ms | x bare (p50) | dropped | racer RTT p50 alone / with "
          "the crowd ms | x |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        rtt = "-"
        ratio = "-"
        if r.rtt_alone:
            a, c = pct(r.rtt_alone, 0.5), pct(r.rtt_crowd, 0.5)
            rtt, ratio = f"{a * 1000:.2f} / {c * 1000:.2f}", f"{c / a:.2f}"
        print(f"| {r.name} | {r.cpu_per * 1e6:.2f} | {r.cpu_per / base_cpu:.2f} | "
              f"{r.frames_per:.2f} | {ms(r.last, 0.5)} / {ms(r.last, 0.9)} | "
              f"{pct(r.last, 0.5) / base_last:.2f} | {r.dropped}"
              f"{f' ({r.missing} moves unseen)' if r.missing else ''} | {rtt} | {ratio} |")
    print(f"load after: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spectators", type=int, default=5000)
    p.add_argument("--clients", type=int, default=5, help="client processes")
    p.add_argument("--moves", type=int, default=40)
    p.add_argument("--gap", type=float, default=0.15, help="seconds between two moves")
    p.add_argument("--processes", type=int, default=3,
                   help="also the same crowd over this many processes on Redis (1: not)")
    p.add_argument("--rounds", type=int, default=1, help="times the whole set is measured")
    p.add_argument("--no-batch", action="store_true", help="spectators without /ws?batch=1")
    p.add_argument("--against", action="append", default=[], metavar="tree:PATH",
                   help="also measure another checkout's server")
    p.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--client-addr", help=argparse.SUPPRESS)
    p.add_argument("--client-path", help=argparse.SUPPRESS)
    p.add_argument("--client-count", type=int, help=argparse.SUPPRESS)
    p.add_argument("--client-first", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.bare_server:
        run(bare_server())
    elif a.client_addr:
        client_main(a)
    else:
        asyncio.run(main(a))
