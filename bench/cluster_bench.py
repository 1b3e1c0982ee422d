"""Multi-process benchmark: solrace on Redis against its baselines, in one run.

    .venv/bin/python bench/cluster_bench.py

Starts its own ``redis-server`` (a free port, append-only file with ``appendfsync everysec``,
as compose.yaml ships it) and measures three things, each against a baseline in the same run:

1. **Across processes.** Two ``solrace serve --redis`` processes; racers (closed loop: a move
   or an undo, wait for the ``state``) connect to the first, spectators to the second, so every
   progress event crosses Redis. Throughput: ``progress`` events delivered to the spectators
   per second, racers in a closed loop. Latency: from a racer sending a move to a spectator on
   the other process receiving its ``progress`` event, p50/p99, with the racers paced at
   ``--paced`` moves per second in all (at saturation latency is only the closed loop's cycle;
   it is printed too), and the racer's own round trip beside it; baseline: a bare redis-py
   ``publish`` from this process to a subscriber process on uvloop that relays each message
   over WebSocket to the same number of spectators of its race in this process as solrace's
   path has, of which the first decodes it (``--relay``; ``--relay-spectators``), at the
   same rate. For scale, the same paced
   racers and spectators all on one embedded process (no Redis) are measured too.
2. **One process on Redis against the embedded default**: the same bots against ``solrace
   serve --redis`` and against ``solrace serve`` (SQLite), alternating phases as
   bench/race_bench.py does; the ratio of moves per second.
3. **Costs**: CPU per move of each solrace process and of redis-server, and Redis commands
   per move (``INFO commandstats``), from which docs/performance.md says what a second machine
   would add.

The embedded server's own ratios against a bare echo server are bench/race_bench.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import redis.asyncio as aioredis
from solrace.tools.race_client import RaceClient
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve

sys.path.insert(0, str(Path(__file__).parent))
from race_bench import RaceLoad, cpu_seconds, pct, start


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server(where: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind",
         "127.0.0.1", "--dir", where, "--save", "", "--appendonly", "yes",
         "--appendfsync", "everysec"], stdout=subprocess.DEVNULL)
    for _ in range(200):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return proc, port
        time.sleep(0.02)
    raise SystemExit("redis-server did not start")


#: This tree's server lifts the caps per client address (every bot comes from 127.0.0.1) and
#: solves no pool of winnable deals (its solver would compete for the CPU measured); an older
#: tree (``--against tree:``) may not know these options, nor need them.
THIS_TREE = ["--pool", "0", "--races-per-address", "100000",
             "--connections-per-address", "100000"]


def solrace(db: str, *extra: str, tree: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    env = None
    if tree is not None:
        env = {**os.environ, "PYTHONPATH": f"{tree}/shared:{tree}/server"}
    return start([sys.executable, "-m", "solrace", "serve", "--port", "0", "--db", db,
                  "--rate-limit", "0", "--http-rate", "0", "--countdown", "0",
                  "--max-races", "100000", "--max-lobbies", "100000",
                  "--par-seconds", "0", "--hint-seconds", "0",
                  *(THIS_TREE if tree is None else []), *extra], env)


# ------------------------------------------------------------------------ relay baseline
async def relay(redis_url: str) -> None:
    """A subscriber that relays every message of channel ``bench`` to its WebSocket clients
    of the message's ``race`` (a client names its race in its path, ``/race``): the bare cost
    of "publish, receive, one WebSocket hop" to as many spectators as solrace's path has."""
    clients: dict[str, set[ServerConnection]] = {}

    async def handler(ws: ServerConnection) -> None:
        race = ws.request.path.strip("/") if ws.request is not None else ""
        clients.setdefault(race, set()).add(ws)
        try:
            await ws.wait_closed()
        finally:
            clients[race].discard(ws)

    r = aioredis.Redis.from_url(redis_url)
    pubsub = r.pubsub()
    await pubsub.subscribe("bench")
    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"relay serving http://127.0.0.1:{port}/", flush=True)
        while True:
            msg = await pubsub.get_message(timeout=None, ignore_subscribe_messages=True)
            if msg is not None:
                race = orjson.loads(msg["data"])["race"]
                for ws in list(clients.get(race, ())):
                    with contextlib.suppress(Exception):
                        await ws.send(msg["data"], text=True)


async def relay_latency(redis_url: str, addr: str, seconds: float, rate: float,
                        races: int = 1, spectators: int = 1) -> list[float]:
    """Publish paced messages carrying their send time, to ``races`` races in turn; the relay
    sends each to the ``spectators`` clients of its race, of which the first decodes it, as
    solrace's spectators in :class:`Across` do: latencies in seconds."""
    r = aioredis.Redis.from_url(redis_url)
    socks = [(await connect(f"ws://{addr}/race{i}", compression=None), s == 0)
             for i in range(races) for s in range(spectators)]
    lat: list[float] = []
    stop = time.perf_counter() + seconds

    async def receive(ws: ClientConnection, decode: bool) -> None:
        with contextlib.suppress(Exception):
            async for frame in ws:
                if decode:
                    sent = orjson.loads(frame)["t"]
                    lat.append(time.perf_counter() - sent)

    readers = [asyncio.create_task(receive(ws, d)) for ws, d in socks]
    gap = 1.0 / rate
    n = 0
    while time.perf_counter() < stop:
        await r.publish("bench", orjson.dumps({"type": "progress", "t": time.perf_counter(),
                                               "race": f"race{n % races}", "v": 1}))
        n += 1
        await asyncio.sleep(gap)
    await asyncio.sleep(0.2)
    for reader in readers:
        reader.cancel()
    for ws, _ in socks:
        await ws.close()
    await r.aclose()
    return lat


# -------------------------------------------------------------------- across processes
class Across:
    """Racers on process A, spectators on process B (see the module docstring)."""

    def __init__(self, a: str, b: str, races: int, racers: int, spectators: int) -> None:
        self.a, self.b = a, b
        self.n_races, self.n_racers, self.n_spectators = races, racers, spectators
        self.bots: list[tuple[ClientConnection, str, str, dict[str, Any], random.Random]] = []
        self.watchers: list[tuple[ClientConnection, bool]] = []
        self.clients: list[RaceClient] = []
        self.sent: dict[tuple[str, str, int], float] = {}
        #: Racers' own round trips (move -> state) of the last run, in seconds.
        self.rtts: list[float] = []

    async def setup(self) -> None:
        host = await RaceClient.connect(f"ws://{self.a}/ws")
        self.clients.append(host)
        for r in range(self.n_races):
            created = await host.create("scotch", players=self.n_racers, seed=7000 + r,
                                        time_limit=86400)
            race = created["race"]
            joined = []
            for i in range(self.n_racers):
                c = await RaceClient.connect(f"ws://{self.a}/ws", keep_events=False)
                j = await c.join(race, name=f"bot{r}-{i}", boards=False)
                joined.append((c, j["player"]))
            for s in range(self.n_spectators):
                w = await RaceClient.connect(f"ws://{self.b}/ws")
                await w.watch(race)
                self.watchers.append((await w.detach(), s == 0))
            await host.start(race, created["host_token"])
            for c, player in joined:
                state = await c.wait_state(race, 30)
                self.bots.append((await c.detach(), race, player, state,
                                  random.Random(len(self.bots))))

    async def run(self, seconds: float, pace: float | None = None) -> tuple[list[float], int]:
        """Racers in a closed loop (``pace`` None: as fast as the server answers) or paced
        (``pace`` moves per second in all, evenly spread): latencies and events delivered."""
        stop = time.perf_counter() + seconds
        gap = len(self.bots) / pace if pace else 0.0
        self.rtts = []
        lat: list[float] = []
        delivered = 0
        sent = self.sent

        async def racer(i: int) -> None:
            ws, race, player, state, rng = self.bots[i]
            rid = 0
            due = time.perf_counter() + gap * rng.random()
            while time.perf_counter() < stop:
                if gap:
                    await asyncio.sleep(max(0.0, due - time.perf_counter()))
                    due += gap
                seq = state["seq"] + 1
                rid += 1
                if seq % 2 == 0:
                    msg: dict[str, Any] = {"type": "undo", "race": race, "seq": seq, "rid": rid}
                else:
                    legal = [m for m in state["legal"] if not m.startswith("f")] or state["legal"]
                    msg = {"type": "move", "race": race, "move": rng.choice(legal), "seq": seq,
                           "rid": rid}
                sent[race, player, seq] = t_sent = time.perf_counter()
                await ws.send(orjson.dumps(msg), text=True)
                reply = None
                while reply is None:
                    frame = await ws.recv(decode=False)
                    if b'"state"' not in frame:
                        continue
                    obj = orjson.loads(frame)
                    for m in obj if isinstance(obj, list) else (obj,):
                        if m.get("rid") == rid:
                            reply = m
                self.rtts.append(time.perf_counter() - t_sent)
                state = reply
            self.bots[i] = (ws, race, player, state, rng)

        async def watcher(ws: ClientConnection, decode: bool) -> None:
            # Read as the relay baseline's spectators do (one recv() a frame, cancelled at
            # the end): a timeout per frame (wait_for) would cost a task per frame here only.
            nonlocal delivered
            with contextlib.suppress(Exception):
                while True:
                    frame = await ws.recv(decode=False)
                    now = time.perf_counter()
                    delivered += frame.count(b'"type":"progress"')
                    if decode:
                        obj = orjson.loads(frame)
                        for m in obj if isinstance(obj, list) else (obj,):
                            if m.get("type") == "progress":
                                t = sent.pop((m["race"], m["player"], m["progress"]["moves"]),
                                             None)
                                if t is not None:
                                    lat.append(now - t)

        watchers = [asyncio.create_task(watcher(ws, d)) for ws, d in self.watchers]
        await asyncio.gather(*(racer(i) for i in range(len(self.bots))))
        await asyncio.sleep(0.3)  # the last moves' progress on its way
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        sent.clear()
        return lat, delivered

    async def close(self) -> None:
        for ws, *_ in self.bots:
            await ws.close()
        for ws, _ in self.watchers:
            await ws.close()
        for c in self.clients:
            await c.close()


async def commandstats(r: aioredis.Redis) -> int:
    info = await r.info("commandstats")
    return sum(int(v["calls"]) for k, v in info.items() if k.startswith("cmdstat_")
               and not k.startswith("cmdstat_info"))


async def against_tree(args: argparse.Namespace, tmp: str, url: str, r: aioredis.Redis,
                       rproc: subprocess.Popen[Any], procs: list[subprocess.Popen[Any]],
                       ours: tuple[subprocess.Popen[str], str, subprocess.Popen[str], str]
                       ) -> None:
    """Section 1 again, this tree against another (``--against tree:PATH``), on the same
    Redis, rounds alternating: moves per second at saturation, the owner's CPU and Redis'
    per move, paced latency move -> spectator on the other process."""
    tree = Path(args.against.removeprefix("tree:")).resolve()
    a2, a2_addr = solrace(f"{tmp}/a2.db", "--redis", url, tree=tree)
    b2, b2_addr = solrace(f"{tmp}/b2.db", "--redis", url, tree=tree)
    procs += [a2, b2]
    a, a_addr, _b, b_addr = ours
    sides = {"this": (Across(a_addr, b_addr, args.races, args.racers, args.spectators), a),
             "other": (Across(a2_addr, b2_addr, args.races, args.racers, args.spectators), a2)}
    for across, _ in sides.values():
        await across.setup()
    got: dict[str, dict[str, list[float]]] = {k: {"rate": [], "owner": [], "redis": [],
                                                  "p50": [], "cmds": []} for k in sides}
    for n in range(args.rounds):
        for name, (across, owner) in (sides.items() if n % 2 == 0
                                      else reversed(sides.items())):
            moves0 = sum(bt[3]["seq"] for bt in across.bots)
            c0, cr0, ops0 = cpu_seconds(owner.pid), cpu_seconds(rproc.pid), await commandstats(r)
            t0 = time.perf_counter()
            await across.run(args.seconds)
            secs = time.perf_counter() - t0
            moves = max(1, sum(bt[3]["seq"] for bt in across.bots) - moves0)
            g = got[name]
            g["rate"].append(moves / secs)
            g["owner"].append((cpu_seconds(owner.pid) - c0) / moves * 1e6)
            g["redis"].append((cpu_seconds(rproc.pid) - cr0) / moves * 1e6)
            g["cmds"].append((await commandstats(r) - ops0) / moves)
            lat, _ = await across.run(args.seconds, pace=args.paced)
            if lat:
                g["p50"].append(statistics.median(lat) * 1000)
        print(f"A/B round {n + 1}/{args.rounds}: this {got['this']['rate'][-1]:,.0f} moves/s, "
              f"other {got['other']['rate'][-1]:,.0f} moves/s", flush=True)
    for across, _ in sides.values():
        await across.close()
    med = {k: {m: statistics.median(v) if v else float("nan") for m, v in g.items()}
           for k, g in got.items()}
    ratios = [x / y for x, y in zip(got["this"]["rate"], got["other"]["rate"], strict=True)]
    print(f"\nA/B across processes, this tree / {tree}:")
    for k in ("this", "other"):
        m = med[k]
        print(f"   {k:5}: {m['rate']:,.0f} moves/s, owner {m['owner']:.0f} µs/move, "
              f"redis-server {m['redis']:.0f} µs/move, {m['cmds']:.2f} commands/move, "
              f"paced move -> spectator p50 {m['p50']:.2f} ms")
    print(f"   throughput this/other, median of rounds: {statistics.median(ratios):.2f}x "
          f"(rounds {min(ratios):.2f}-{max(ratios):.2f})")
    a2.terminate()
    b2.terminate()


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="cluster_bench_") as tmp:
        rproc, rport = redis_server(tmp)
        url = f"redis://127.0.0.1:{rport}/0"
        procs: list[subprocess.Popen[Any]] = [rproc]
        try:
            a, a_addr = solrace(f"{tmp}/a.db", "--redis", url)
            b, b_addr = solrace(f"{tmp}/b.db", "--redis", url)
            rel, rel_addr = start([sys.executable, __file__, "--relay", url])
            procs += [a, b, rel]
            r = aioredis.Redis.from_url(url)
            print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, redis-server on "
                  f"{rport}, load average before: {os.getloadavg()[0]:.2f}")

            # 1. across processes, alternating with the relay baseline
            across = Across(a_addr, b_addr, args.races, args.racers, args.spectators)
            await across.setup()
            lat_all: list[float] = []
            sat_all: list[float] = []
            rtt_all: list[float] = []
            base_all: list[float] = []
            rates: list[float] = []
            delivered_rates: list[float] = []
            cpu_a: list[float] = []
            cpu_b: list[float] = []
            cpu_r: list[float] = []
            ops: list[float] = []
            ratios: list[float] = []
            for n in range(args.rounds):
                moves0 = sum(bt[3]["seq"] for bt in across.bots)
                ca0, cb0 = cpu_seconds(a.pid), cpu_seconds(b.pid)
                cr0, ops0 = cpu_seconds(rproc.pid), await commandstats(r)
                t0 = time.perf_counter()
                sat, delivered = await across.run(args.seconds)
                secs = time.perf_counter() - t0
                moves = sum(bt[3]["seq"] for bt in across.bots) - moves0
                rates.append(moves / secs)
                delivered_rates.append(delivered / secs)
                cpu_a.append((cpu_seconds(a.pid) - ca0) / max(1, moves) * 1e6)
                cpu_b.append((cpu_seconds(b.pid) - cb0) / max(1, moves) * 1e6)
                cpu_r.append((cpu_seconds(rproc.pid) - cr0) / max(1, moves) * 1e6)
                ops.append((await commandstats(r) - ops0) / max(1, moves))
                # Latency at a given load, not at saturation (where it is the closed loop's
                # cycle, racers / moves per second): paced racers, and the baseline at the
                # same rate.
                lat, _ = await across.run(args.seconds, pace=args.paced)
                rtt_all += across.rtts
                base = await relay_latency(url, rel_addr, args.seconds, rate=args.paced,
                                           races=args.races,
                                           spectators=args.relay_spectators or args.spectators)
                sat_all += sat
                lat_all += lat
                base_all += base
                if lat and base:
                    ratios.append(statistics.median(lat) / statistics.median(base))
                print(f"round {n + 1}/{args.rounds}: {moves / secs:,.0f} moves/s, "
                      f"{delivered / secs:,.0f} events/s delivered on the other process, "
                      f"latency p50 saturated {pct(sat, .5) * 1000:.2f} ms, paced "
                      f"{pct(lat, .5) * 1000:.2f} ms (baseline "
                      f"{pct(base, .5) * 1000:.2f} ms)", flush=True)
            await across.close()
            print("\n1. across processes (racers on A, spectators on B):")
            print(f"   moves/s {statistics.median(rates):,.0f}; progress events delivered on B "
                  f"{statistics.median(delivered_rates):,.0f}/s (goal >= 20,000)")
            print(f"   latency move -> spectator on B, saturated (closed loop): p50 "
                  f"{pct(sat_all, .5) * 1000:.2f} ms, p99 {pct(sat_all, .99) * 1000:.2f} ms")
            print(f"   latency move -> spectator on B, paced at {args.paced:,.0f} moves/s: p50 "
                  f"{pct(lat_all, .5) * 1000:.2f} ms, p99 {pct(lat_all, .99) * 1000:.2f} ms")
            print(f"   the racer's own round trip (move -> state from A), paced: p50 "
                  f"{pct(rtt_all, .5) * 1000:.2f} ms, p99 {pct(rtt_all, .99) * 1000:.2f} ms")
            print(f"   baseline publish -> receive -> one WebSocket hop to "
                  f"{args.relay_spectators or args.spectators} "
                  f"spectators a race at {args.paced:,.0f}/s: "
                  f"p50 "
                  f"{pct(base_all, .5) * 1000:.2f} ms, p99 {pct(base_all, .99) * 1000:.2f} ms")
            print(f"   ratio p50 (median of rounds): {statistics.median(ratios):.2f}x (goal <= 2x)"
                  f"; p99 {pct(lat_all, .99) / max(1e-9, pct(base_all, .99)):.2f}x")
            print(f"   CPU per move: process A (racers, owner) {statistics.median(cpu_a):.0f} µs, "
                  f"process B (spectators) {statistics.median(cpu_b):.0f} µs, redis-server "
                  f"{statistics.median(cpu_r):.0f} µs; Redis commands per move "
                  f"{statistics.median(ops):.2f}")

            if args.against:
                await against_tree(args, tmp, url, r, rproc, procs, (a, a_addr, b, b_addr))
            if args.across_only:
                await r.aclose()
                return
            # 2. one process on Redis against the embedded default
            a.terminate()
            b.terminate()
            emb, emb_addr = solrace(f"{tmp}/emb.db")
            red, red_addr = solrace(f"{tmp}/red.db", "--redis", url)
            procs += [emb, red]
            # For scale: the same paced racers and spectators on one embedded process (no
            # Redis, no second process): what any path through a solrace server costs.
            alone = Across(emb_addr, emb_addr, args.races, args.racers, args.spectators)
            await alone.setup()
            lat_emb: list[float] = []
            rtt_emb: list[float] = []
            for _ in range(args.rounds):
                lat, _ = await alone.run(args.seconds, pace=args.paced)
                lat_emb += lat
                rtt_emb += alone.rtts
            await alone.close()
            print(f"   for scale, all on one embedded process, paced at {args.paced:,.0f} moves/s: "
                  f"move -> spectator p50 {pct(lat_emb, .5) * 1000:.2f} ms, p99 "
                  f"{pct(lat_emb, .99) * 1000:.2f} ms; the racer's round trip p50 "
                  f"{pct(rtt_emb, .5) * 1000:.2f} ms")
            print("\n2. one process on Redis against the embedded default (same bots):")
            for size in [int(x) for x in args.race_size.split(",")]:
                base_load = RaceLoad(emb_addr, args.bots, size, emb.pid, False, "scotch", True,
                                     False)
                red_load = RaceLoad(red_addr, args.bots, size, red.pid, False, "scotch", True,
                                    False)
                await base_load.setup()
                await red_load.setup()
                pair: list[float] = []
                cpu_red: list[float] = []
                ops_red: list[float] = []
                for _ in range(args.rounds):
                    e = await base_load.run(args.seconds)
                    ops0 = await commandstats(r)
                    c0 = cpu_seconds(rproc.pid)
                    g = await red_load.run(args.seconds)
                    moves = len(g.rtts)
                    ops_red.append((await commandstats(r) - ops0) / max(1, moves))
                    cpu_red.append((cpu_seconds(rproc.pid) - c0) / max(1, moves) * 1e6)
                    pair.append(g.rate / e.rate)
                    print(f"   races of {size}: embedded {e.rate:,.0f} moves/s ({e.cpu_us:.0f} "
                          f"µs/move), on Redis {g.rate:,.0f} moves/s ({g.cpu_us:.0f} µs/move) "
                          f"-> {g.rate / e.rate:.2f}x", flush=True)
                print(f"   races of {size}: on Redis / embedded, median of {args.rounds} rounds: "
                      f"{statistics.median(pair):.2f}x (goal >= 0.5x; rounds "
                      f"{min(pair):.2f}-{max(pair):.2f}); redis-server "
                      f"{statistics.median(cpu_red):.0f} µs and "
                      f"{statistics.median(ops_red):.2f} commands per move")
                await base_load.close()
                await red_load.close()
            await r.aclose()
        finally:
            for proc in reversed(procs):  # Redis last: the others would log its absence
                with contextlib.suppress(Exception):
                    proc.terminate()
                    proc.wait(5)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--races", type=int, default=10, help="races across processes")
    p.add_argument("--racers", type=int, default=2, help="racers per race across processes")
    p.add_argument("--spectators", type=int, default=10, help="spectators per race on B")
    p.add_argument("--bots", type=int, default=50, help="bots for the embedded comparison")
    p.add_argument("--race-size", default="2,8", help="race sizes for the embedded comparison")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--paced", type=float, default=500.0,
                   help="moves per second (all racers) for the latency phase, and the baseline's "
                        "publishes per second")
    p.add_argument("--against", default="", metavar="tree:PATH",
                   help="also race this tree against another source tree across processes")
    p.add_argument("--across-only", action="store_true",
                   help="measure only across processes (1.), not the embedded comparison (2.)")
    p.add_argument("--relay-spectators", type=int, default=0,
                   help="the baseline's clients per race (default: --spectators, as solrace's "
                        "path; 1 with --races 1 is the bare single hop measured until issue 31)")
    p.add_argument("--relay", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.relay:
        # The bare subscriber runs on uvloop, as solrace does by default.
        import uvloop
        with contextlib.suppress(KeyboardInterrupt):
            uvloop.run(relay(args.relay))
    else:
        asyncio.run(main(args))
