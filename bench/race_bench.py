"""Race server benchmark: bots racing on loopback against the real server, and a bare
``websockets`` echo server as the baseline, in the same run.

    .venv/bin/python bench/race_bench.py --racers 50 --race-size 2,5,8 --seconds 10 --rounds 3

(``--binary`` for msgpack frames, ``--idle 0`` to skip the idle-memory phase.)

Both servers run as subprocesses (one core each at most); the load comes from this process.
Each racer does move round-trips: it sends a move (or an undo of its last move, so it never runs
out of legal moves) and waits for its ``state`` reply. Each echo client sends a frame of the same
size and waits for the echo. Reported: round-trip p50/p99, messages (moves) per second, the
ratios race/echo, and the server's memory per idle connection (VmRSS growth over ``--idle``
connections that only connect).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
import orjson
from solrace.client import RaceClient
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve

SERVER_LINE = "serving http://"
# e.g. RACE_BENCH_PROFILE="-m cProfile -o /tmp/server.prof" to profile the race server.
PROFILE = os.environ.get("RACE_BENCH_PROFILE", "").split()


# ------------------------------------------------------------------------ echo server
async def _echo(ws: ServerConnection) -> None:
    async for message in ws:
        await ws.send(message)


async def echo_server() -> None:
    async with serve(_echo, "127.0.0.1", 0, compression=None, max_size=2**16) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"echo {SERVER_LINE}127.0.0.1:{port}/", flush=True)
        await server.serve_forever()


# -------------------------------------------------------------------------- helpers
def start(cmd: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if SERVER_LINE not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, line.split("http://", 1)[1].strip().rstrip("/")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Result:
    def __init__(
        self, name: str, rtts: list[float], seconds: float, cpu: float, client_cpu: float
    ) -> None:
        self.name = name
        self.rtts = rtts
        self.rate = len(rtts) / seconds
        self.p50 = pct(rtts, 0.50) * 1000
        self.p99 = pct(rtts, 0.99) * 1000
        self.cpu_us = cpu / max(1, len(rtts)) * 1e6
        self.client_us = client_cpu / max(1, len(rtts)) * 1e6

    def line(self, label: str) -> str:
        return (
            f"{label:<7} {self.rate:>8,.0f} msg/s   p50 {self.p50:6.2f} ms   "
            f"p99 {self.p99:6.2f} ms   CPU per msg: server {self.cpu_us:4.0f} µs, "
            f"load client {self.client_us:4.0f} µs"
        )


# ------------------------------------------------------------------------------ load
async def echo_load(addr: str, clients: int, seconds: float, pid: int, binary: bool) -> Result:
    payload: Any = {"type": "move", "race": "abcdefgh", "move": "t12>t17", "seq": 1234, "rid": 1}
    frame: str | bytes = msgpack.packb(payload) if binary else json.dumps(payload)
    conns = [await connect(f"ws://{addr}/", compression=None) for _ in range(clients)]
    rtts: list[float] = []
    stop = time.perf_counter() + seconds

    async def one(ws: ClientConnection) -> None:
        while time.perf_counter() < stop:
            t = time.perf_counter()
            await ws.send(frame)
            reply = await ws.recv()
            (msgpack.unpackb if binary else json.loads)(reply)
            rtts.append(time.perf_counter() - t)

    cpu0, own0 = cpu_seconds(pid), own_cpu()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(ws) for ws in conns))
    elapsed = time.perf_counter() - t0
    cpu, own = cpu_seconds(pid) - cpu0, own_cpu() - own0
    for ws in conns:
        await ws.close()
    return Result("echo", rtts, elapsed, cpu, own)


async def race_load(
    addr: str, racers: int, size: int, seconds: float, pid: int, binary: bool, game: str,
    batch: bool,
) -> Result:
    url = f"ws://{addr}/ws"
    host = await RaceClient.connect(url)
    clients: list[tuple[RaceClient, str]] = []
    for r in range(0, racers, size):
        created = await host.create(game, players=min(size, racers - r), seed=1000 + r)
        race = created["race"]
        for i in range(min(size, racers - r)):
            client = await RaceClient.connect(url, binary=binary, keep_events=False, batch=batch)
            await client.join(race, name=f"bot{r + i}")
            clients.append((client, race))
        await host.start(race, created["host_token"])
    for client, race in clients:
        await client.wait_state(race, 30)
        await client.detach()

    rtts: list[float] = []
    stop = time.perf_counter() + seconds
    unpack = msgpack.unpackb if binary else orjson.loads
    pack = msgpack.packb if binary else orjson.dumps
    state_tag = b"\xa5state" if binary else b'"state"'

    async def one(client: RaceClient, race: str, rng: random.Random) -> None:
        # The bot drives the bare websockets connection itself, as the echo clients do: send,
        # then read frames until the one carrying its state (the progress events of the race
        # arrive in between, or in the same frame when the server batches).
        ws = client.ws
        state = client.states[race]
        undo_next = False
        rid = 0
        while time.perf_counter() < stop:
            seq = state["seq"] + 1
            rid += 1
            if undo_next:
                msg: dict[str, Any] = {"type": "undo", "race": race, "seq": seq, "rid": rid}
            else:
                legal = [m for m in state["legal"] if not m.startswith("f")] or state["legal"]
                if not legal:
                    return
                msg = {"type": "move", "race": race, "move": rng.choice(legal), "seq": seq,
                       "rid": rid}
            t = time.perf_counter()
            await ws.send(pack(msg), text=not binary)
            reply = None
            while reply is None:
                frame = await ws.recv(decode=False)
                if state_tag not in frame:
                    continue
                obj = unpack(frame)
                for m in obj if isinstance(obj, list) else (obj,):
                    if m.get("rid") == rid:
                        reply = m
            rtts.append(time.perf_counter() - t)
            if reply["type"] != "state":
                raise RuntimeError(f"unexpected reply {reply}")
            state = reply
            undo_next = not undo_next

    cpu0, own0 = cpu_seconds(pid), own_cpu()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(c, race, random.Random(i)) for i, (c, race) in enumerate(clients)))
    elapsed = time.perf_counter() - t0
    cpu, own = cpu_seconds(pid) - cpu0, own_cpu() - own0
    for client, _ in clients:
        await client.close()
    await host.close()
    return Result("race", rtts, elapsed, cpu, own)


async def idle_memory(addr: str, path: str, count: int, pid: int) -> float:
    """KiB of server RSS per idle connection (connected, nothing sent)."""
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    conns: list[ClientConnection] = []
    for i in range(0, count, 200):
        batch = min(200, count - i)
        conns += await asyncio.gather(
            *(connect(f"ws://{addr}{path}", compression=None) for _ in range(batch))
        )
    await asyncio.sleep(1.0)
    after = rss_kib(pid)
    await asyncio.gather(*(ws.close() for ws in conns))
    return (after - before) / count


async def main(args: argparse.Namespace) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(soft, min(hard, 4 * args.idle + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    sizes = [int(x) for x in str(args.race_size).split(",")]
    with tempfile.TemporaryDirectory(prefix="race_bench_") as tmp:
        server, server_addr = start(
            [sys.executable, *PROFILE, "-m", "solrace", "serve", "--port", "0",
             "--db", f"{tmp}/bench.db", "--rate-limit", "0", "--countdown", "0",
             "--max-races", "100000", *(["--uvloop"] if args.uvloop else [])]
        )
        echo, echo_addr = start(
            [sys.executable, __file__, "--echo-server", *(["--uvloop"] if args.uvloop else [])]
        )
        encoding = ("msgpack" if args.binary else "JSON") + (
            "" if args.no_batch else ", racers on /ws?batch=1")
        try:
            loop = "uvloop" if args.uvloop else "asyncio"
            print(f"{args.racers} concurrent clients, {args.seconds:g} s per phase, {encoding} "
                  f"frames, servers on {loop}, Python {sys.version.split()[0]}, "
                  f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f}")
            ratios: dict[int, list[tuple[float, float, float]]] = {size: [] for size in sizes}
            for n in range(args.rounds):
                # Echo and race phases alternate, so a noisy neighbour hits both alike.
                if args.rounds > 1:
                    print(f"round {n + 1}/{args.rounds}")
                e = await echo_load(echo_addr, args.racers, args.seconds, echo.pid, args.binary)
                print(e.line("echo"))
                for size in sizes:
                    r = await race_load(
                        server_addr, args.racers, size, args.seconds, server.pid, args.binary,
                        args.game, not args.no_batch,
                    )
                    print(r.line(f"race/{size}"))
                    ratio = (r.rate / e.rate, r.p50 / e.p50, r.p99 / e.p99)
                    ratios[size].append(ratio)
                    print(f"  race/{size} vs echo: throughput {ratio[0]:.2f}x (goal >= 0.5x), "
                          f"p50 {ratio[1]:.2f}x (goal <= 2x), p99 {ratio[2]:.2f}x")
            if args.rounds > 1:
                for size, values in ratios.items():
                    med = [statistics.median(v[i] for v in values) for i in range(3)]
                    print(f"median over {args.rounds} rounds, race/{size} vs echo: throughput "
                          f"{med[0]:.2f}x, p50 {med[1]:.2f}x, p99 {med[2]:.2f}x")
            if args.idle:
                kib = await idle_memory(server_addr, "/ws", args.idle, server.pid)
                kib_echo = await idle_memory(echo_addr, "/", args.idle, echo.pid)
                print(f"idle connections ({args.idle}): race server {kib:.1f} KiB each "
                      f"(goal <= 50), echo server {kib_echo:.1f} KiB each")
        finally:
            for proc in (server, echo):
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--racers", type=int, default=50)
    p.add_argument("--race-size", default="2,5,8",
                   help="racers per race (1..8); a comma list runs one phase per size")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--idle", type=int, default=2000, help="idle connections for memory; 0: skip")
    p.add_argument("--rounds", type=int, default=1, help="alternate echo and race phases")
    p.add_argument("--game", default="scotch", help="scotch, quadruple-canfield or yukon")
    p.add_argument("--binary", action="store_true", help="msgpack frames instead of JSON")
    p.add_argument("--no-batch", action="store_true",
                   help="bots ask for one message per frame (no /ws?batch=1)")
    p.add_argument("--uvloop", action="store_true", help="both servers on uvloop (if installed)")
    p.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.echo_server:
        with contextlib.suppress(KeyboardInterrupt):
            if args.uvloop:
                import uvloop

                uvloop.run(echo_server())
            else:
                asyncio.run(echo_server())
    else:
        asyncio.run(main(args))
