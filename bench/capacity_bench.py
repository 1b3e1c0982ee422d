"""Capacity: what a move, a spectator's event and an idle connection cost a process on Redis,
and a run of 10,000 racers over four processes that checks the sum.

    .venv/bin/python bench/capacity_bench.py --racers 10000 --processes 4 --move-every 10

Starts its own ``redis-server`` (a free port, as bench/cluster_bench.py does) and
``--processes`` ``solrace serve --redis`` processes, and drives them from client processes
(``--client``, lean: bare websockets connections, no reader task, ``compression=None``), all
on loopback. Each phase lasts ``--seconds``; CPU is each process's user+system time
(``/proc/PID/stat``) over the phase, redis-server's alike.

Calibration, one process at a time, the others idle:

1. **base**: what a process spends doing nothing (its leases, janitor, figures), CPU/s.
2. **idle connections**: ``--idle`` connections that only connect, on process 0: CPU/s and
   KiB of RSS per connection.
3. **moves**: ``--cal-racers`` lean racers (races of 2, Scotch) on process 0, each sending a
   move or an undo every ``cal-racers / rate`` seconds, where ``rate`` is the moves per second
   per process of the check below: CPU per move, beyond base and connections; redis-server's
   CPU and commands per move.
4. **spectators**: one race of 2 racers on process 0 (``--spec-moves`` moves per second in
   all) watched by ``--spectators`` connections on process 1: CPU per event delivered to one
   spectator on process 1, beyond base and connections.

Check: ``--racers`` lean racers spread evenly over the processes (each race's two racers on
the process that owns it, as a router would place them), each moving every ``--move-every``
seconds. Each process's CPU/s is compared with what the calibration predicts for its
connections and moves (base + connections x idle + moves/s x move), and redis-server's with
its moves x Redis CPU per move; so is the RSS growth. docs/performance.md "Capacity plan
(issue 31)" is built from these figures.
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

import orjson
import redis.asyncio as aioredis
from solrace.tools.race_client import RaceClient
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import commandstats, redis_server, solrace
from race_bench import cpu_seconds, pct, rss_kib

Message = dict[str, Any]


def raise_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ------------------------------------------------------------------ client processes
async def open_many(url: str, n: int, chunk: int = 100) -> list[ClientConnection]:
    out: list[ClientConnection] = []
    for i in range(0, n, chunk):
        out += await asyncio.gather(*(connect(url, compression=None, max_size=2**20)
                                      for _ in range(min(chunk, n - i))))
    return out


async def make_racers(addr: str, n: int, seed: int) -> list[tuple[ClientConnection, str, Message]]:
    """``n`` lean racers in races of 2 (Scotch), started; each with its first full state."""
    url = f"ws://{addr}/ws"
    host = await RaceClient.connect(url, keep_events=False)
    out: list[tuple[ClientConnection, str, Message]] = []

    async def one_race(r: int) -> None:
        created = await host.create("scotch", players=2, seed=seed + r, time_limit=86400)
        race = created["race"]
        clients = [await RaceClient.connect(url, keep_events=False) for _ in range(2)]
        for i, c in enumerate(clients):
            await c.join(race, name=f"c{seed + r}x{i}", boards=False, lean=True)
        await host.start(race, created["host_token"])
        for c in clients:
            state = await c.wait_state(race, 60)
            out.append((await c.detach(), race, state))

    for r in range(0, n // 2, 20):
        await asyncio.gather(*(one_race(q) for q in range(r, min(n // 2, r + 20))))
    await host.close()
    return out


async def drive(racers: list[tuple[ClientConnection, str, Message]], every: float,
                seconds: float) -> Message:
    """Each racer sends a move or an undo (alternately, from the first position, as
    bench/race_bench.py does) every ``every`` seconds, spread at random; its round trips."""
    rtts: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds

    async def one(i: int) -> None:
        nonlocal errors
        ws, race, state = racers[i]
        rng = random.Random(i)
        legal = [m for m in state["legal"] if not m.startswith("f")] or state["legal"]
        seq, rid = state["seq"], 0
        due = time.perf_counter() + every * rng.random()
        while True:
            await asyncio.sleep(max(0.0, min(due, stop) - time.perf_counter()))
            if time.perf_counter() >= stop:
                break
            due += every
            seq += 1
            rid += 1
            msg: Message = ({"type": "undo", "race": race, "seq": seq, "rid": rid}
                            if seq % 2 == 0 else
                            {"type": "move", "race": race, "move": rng.choice(legal),
                             "seq": seq, "rid": rid})
            t = time.perf_counter()
            await ws.send(orjson.dumps(msg), text=True)
            reply = None
            while reply is None:
                frame = await ws.recv(decode=False)
                if b'"rid"' not in frame:
                    continue
                obj = orjson.loads(frame)
                for m in obj if isinstance(obj, list) else (obj,):
                    if m.get("rid") == rid:
                        reply = m
            rtts.append(time.perf_counter() - t)
            if reply["type"] != "state":
                errors += 1
                seq = reply.get("seq", seq)
        racers[i] = (ws, race, {**state, "seq": seq})

    await asyncio.gather(*(one(i) for i in range(len(racers))))
    return {"moves": len(rtts), "errors": errors, "p50": pct(rtts, 0.5) * 1000,
            "p99": pct(rtts, 0.99) * 1000}


async def drain(ws: ClientConnection, counter: list[int]) -> None:
    """Read a connection's frames (a batch frame counts its messages), counting them."""
    with contextlib.suppress(Exception):
        while True:
            frame = await ws.recv(decode=False)
            counter[0] += frame.count(b'"type"')


async def client(cfg: Message) -> None:
    """One client process: set up what ``cfg`` asks, say ``ready``, run on ``go``, print the
    result, close on ``stop``."""
    raise_fd_limit()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    kind, held = cfg["kind"], []
    result: Message = {}
    if kind == "idle":
        held = await open_many(f"ws://{cfg['addr']}/ws", cfg["n"])
    elif kind == "racers":
        racers = await make_racers(cfg["addr"], cfg["n"], cfg["seed"])
        held = [ws for ws, _, _ in racers]
    elif kind == "spectators":
        racers = await make_racers(cfg["addr"], 2, cfg["seed"])
        held = [ws for ws, _, _ in racers]
        race = racers[0][1]
        watchers = [await RaceClient.connect(f"ws://{cfg['watch_addr']}/ws", batch=False,
                                             keep_events=False) for _ in range(cfg["n"])]
        for chunk in range(0, len(watchers), 100):
            await asyncio.gather(*(w.watch(race) for w in watchers[chunk:chunk + 100]))
        counter = [0]
        drains = []
        for w in watchers:
            ws = await w.detach()
            held.append(ws)
            drains.append(loop.create_task(drain(ws, counter)))
    print(json.dumps({"ready": len(held)}), flush=True)
    await reader.readline()  # go
    if kind == "racers" and cfg["every"]:
        result = await drive(racers, cfg["every"], cfg["seconds"])
    elif kind == "spectators":
        before = counter[0]
        result = await drive(racers, 2 / cfg["rate"], cfg["seconds"])
        await asyncio.sleep(0.3)  # the last board views
        result["delivered"] = counter[0] - before
    else:
        await asyncio.sleep(cfg["seconds"])
    print(json.dumps(result), flush=True)
    await reader.readline()  # stop
    await asyncio.gather(*(ws.close() for ws in held), return_exceptions=True)


class Clients:
    """Client processes started together, run together."""

    def __init__(self) -> None:
        self.procs: list[asyncio.subprocess.Process] = []

        self.waiting: list[asyncio.subprocess.Process] = []  # not ready yet

    async def add(self, cfg: Message, wait: bool = False) -> None:
        """Start a client process; with ``wait``, return once it is set up (a set-up of
        thousands of racers at once starves the servers' loops on a small machine)."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--client", json.dumps(cfg),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.procs.append(proc)
        self.waiting.append(proc)
        if wait:
            await self.ready()

    async def ready(self) -> None:
        for proc in self.waiting:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 900)
            if not line:
                raise SystemExit("a client process failed while setting up")
        self.waiting = []

    async def run(self) -> list[Message]:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        out = []
        for proc in self.procs:
            assert proc.stdout is not None
            out.append(json.loads(await proc.stdout.readline()))
        return out

    async def close(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            with contextlib.suppress(Exception):
                proc.stdin.write(b"stop\n")
                await proc.stdin.drain()
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
        self.procs = []


async def redis_cpu(r: aioredis.Redis) -> float:
    info = await r.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def phase(pids: list[int], r: aioredis.Redis, clients: Clients
                ) -> tuple[list[float], float, float, float, list[Message]]:
    """Run ``clients``: each process's CPU/s, Redis CPU/s, Redis commands, seconds, results."""
    await clients.ready()
    await asyncio.sleep(1.0)  # what the set-up left behind settles
    cpu0 = [cpu_seconds(p) for p in pids]
    rc0, ops0, t0 = await redis_cpu(r), await commandstats(r), time.perf_counter()
    results = await clients.run()
    secs = time.perf_counter() - t0
    cpu = [(cpu_seconds(p) - c) / secs for p, c in zip(pids, cpu0, strict=True)]
    rc, ops = (await redis_cpu(r) - rc0) / secs, await commandstats(r) - ops0
    return cpu, rc, ops, secs, results


async def main(args: argparse.Namespace) -> None:
    raise_fd_limit()
    n = args.processes
    rate = args.racers / n / args.move_every  # moves per second per process in the check
    with tempfile.TemporaryDirectory(prefix="capacity_bench_") as tmp:
        # The check's processes and the calibration's are on two Redis servers: a process
        # stopped lets its races go, and another process on its Redis would take them over
        # (and renew their leases ever after). Between calibration phases that Redis is
        # emptied for the same reason.
        os.mkdir(tmp + "/check")
        (rproc, rport), (cproc, cport) = redis_server(tmp + "/check"), redis_server(tmp)
        url, cal_url = f"redis://127.0.0.1:{rport}/0", f"redis://127.0.0.1:{cport}/0"
        procs: list[subprocess.Popen[Any]] = [rproc, cproc]
        made = iter(range(1000))

        def fresh(where: str) -> tuple[int, str]:
            """A new process on the Redis at ``where``."""
            proc, addr = solrace(f"{tmp}/p{next(made)}.db", "--redis", where)
            procs.append(proc)
            return proc.pid, addr

        async def stop(*pids: int) -> None:
            """Stop calibration processes, and empty their Redis."""
            for proc in procs:
                if proc.pid in pids:
                    proc.terminate()
                    proc.wait(10)
            await cr.flushall()

        try:
            r = aioredis.Redis.from_url(url)
            cr = aioredis.Redis.from_url(cal_url)
            print(f"{n} processes on one Redis, Python {sys.version.split()[0]}, "
                  f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f}",
                  flush=True)
            s = args.seconds

            # 1. base, on the processes of the check (fresh, idle)
            servers = [fresh(url) for _ in range(n)]
            pids, addrs = [p for p, _ in servers], [a for _, a in servers]
            nothing = Clients()
            await nothing.add({"kind": "idle", "addr": addrs[0], "n": 0, "seconds": s})
            c0 = await redis_cpu(cr)
            cpu, rc_base, _, secs, _ = await phase(pids, r, nothing)
            crc_base = (await redis_cpu(cr) - c0) / secs  # about: the same length
            await nothing.close()
            base = statistics.mean(cpu)
            print(f"base: {base * 1000:.1f} ms CPU/s per process "
                  f"({', '.join(f'{c * 1000:.1f}' for c in cpu)}), "
                  f"redis-server {rc_base * 1000:.1f} ms/s", flush=True)

            # 2. idle connections
            pid, addr = fresh(cal_url)
            rss0 = rss_kib(pid)
            idle = Clients()
            await idle.add({"kind": "idle", "addr": addr, "n": args.idle, "seconds": s})
            cpu, _, _, _, _ = await phase([pid], cr, idle)
            kib_conn = (rss_kib(pid) - rss0) / args.idle
            await idle.close()
            await stop(pid)
            idle_us = max(0.0, cpu[0] - base) / args.idle * 1e6  # µs of CPU per second
            print(f"idle connections ({args.idle}): {idle_us:.2f} µs CPU/s and {kib_conn:.1f} "
                  f"KiB each", flush=True)

            # 2b. racers who hold a race and never move: the race's lease, renewed in Redis
            pid, addr = fresh(cal_url)
            rss0 = rss_kib(pid)
            sitters = Clients()
            await sitters.add({"kind": "racers", "addr": addr, "n": args.idle_racers,
                               "seed": 500000, "every": 0, "seconds": s})
            cpu, rc, _, _, _ = await phase([pid], cr, sitters)
            racer_kib = (rss_kib(pid) - rss0) / args.idle_racers
            await sitters.close()
            await stop(pid)
            racer_us = max(0.0, cpu[0] - base) / args.idle_racers * 1e6
            redis_racer_us = max(0.0, rc - crc_base) / args.idle_racers * 1e6
            print(f"racers who never move ({args.idle_racers}, races of 2): {racer_us:.2f} µs "
                  f"CPU/s each, redis-server {redis_racer_us:.2f} µs/s each, {racer_kib:.1f} KiB "
                  "each", flush=True)

            async def moves_at(per_s: float) -> tuple[float, float, float]:
                """A fresh process, ``--cal-racers`` racers at ``per_s`` moves a second: CPU
                per move beyond base and racers, Redis CPU per move, Redis commands per move."""
                pid, addr = fresh(cal_url)
                movers = Clients()
                await movers.add({"kind": "racers", "addr": addr, "n": args.cal_racers,
                                  "seed": 1000, "every": args.cal_racers / per_s, "seconds": s})
                cpu, rc, ops, secs, res = await phase([pid], cr, movers)
                await movers.close()
                await stop(pid)
                moves_s = res[0]["moves"] / secs
                move_us = (cpu[0] - base - args.cal_racers * racer_us / 1e6) / moves_s * 1e6
                redis_us = ((rc - crc_base - args.cal_racers * redis_racer_us / 1e6) / moves_s
                            * 1e6)
                ops_move = ops / max(1, res[0]["moves"])
                print(f"moves: {args.cal_racers} racers, {moves_s:,.0f} moves/s: {move_us:.0f} µs "
                      f"CPU per move (process {cpu[0] * 1000:.0f} ms/s), redis-server "
                      f"{redis_us:.0f} µs and {ops_move:.2f} Redis commands per move, round trip "
                      f"p50 {res[0]['p50']:.2f} ms p99 {res[0]['p99']:.2f} ms", flush=True)
                return move_us, redis_us, ops_move

            # 3. moves, at the check's rate per process, with fewer racers; and at other rates
            # (more moves in one loop turn share its commit: the cost per move falls)
            move_us, redis_move_us, ops_move = await moves_at(rate)
            for other in [float(x) for x in args.rates.split(",") if x]:
                await moves_at(other)
            if args.skip_check:
                return

            # 4. spectators on another process than the race's
            (owner, owner_addr), (pid, addr) = fresh(cal_url), fresh(cal_url)
            spec = Clients()
            await spec.add({"kind": "spectators", "addr": owner_addr, "watch_addr": addr,
                            "n": args.spectators, "seed": 900000, "rate": args.spec_moves,
                            "seconds": s})
            cpu, _, _, secs, res = await phase([pid], cr, spec)
            await spec.close()
            await stop(pid, owner)
            events_s = res[0]["delivered"] / secs
            spec_us = ((cpu[0] - base - args.spectators * idle_us / 1e6) / max(1.0, events_s)
                       * 1e6)
            print(f"spectators: {args.spectators} on a process of their own, {events_s:,.0f} "
                  f"events/s delivered: {spec_us:.1f} µs CPU per event per spectator (process "
                  f"{cpu[0] * 1000:.0f} ms/s)", flush=True)

            # 5. the check
            rss0s = [rss_kib(p) for p in pids]
            check = Clients()
            per = args.racers // n
            for i in range(n):
                await check.add({"kind": "racers", "addr": addrs[i], "n": per,
                                 "seed": 10000 + i * per, "every": args.move_every,
                                 "seconds": s}, wait=True)
            t_setup = time.perf_counter()
            cpu, rc, ops, secs, res = await phase(pids, r, check)
            setup_s = time.perf_counter() - t_setup - secs
            grown = [(rss_kib(p) - k0) for p, k0 in zip(pids, rss0s, strict=True)]
            await check.close()
            print(f"\ncheck: {args.racers} racers over {n} processes, one action every "
                  f"{args.move_every:g} s each (set up in {setup_s:.0f} s)")
            ratios = []
            for i in range(n):
                m = res[i]["moves"] / secs
                predicted = base + per * racer_us / 1e6 + m * move_us / 1e6
                ratios.append(cpu[i] / predicted)
                print(f"  process {i}: {m:,.0f} moves/s, CPU {cpu[i] * 1000:.0f} ms/s, predicted "
                      f"{predicted * 1000:.0f} ms/s ({cpu[i] / predicted:.2f}x); RSS grew "
                      f"{grown[i] / 1024:.1f} MiB, predicted {per * racer_kib / 1024:.1f} MiB; "
                      f"round trip p50 {res[i]['p50']:.2f} ms p99 {res[i]['p99']:.2f} ms, "
                      f"{res[i]['errors']} errors")
            total = sum(x["moves"] for x in res) / secs
            predicted_r = (rc_base + args.racers * redis_racer_us / 1e6
                           + total * redis_move_us / 1e6)
            print(f"  redis-server: CPU {rc * 1000:.0f} ms/s, predicted {predicted_r * 1000:.0f} "
                  f"ms/s ({rc / predicted_r:.2f}x); {ops / max(1, total * secs):.2f} commands "
                  f"per move")
            print(f"  measured / predicted CPU, processes: {min(ratios):.2f}-{max(ratios):.2f}x "
                  f"(goal within 25 %); load average after: {os.getloadavg()[0]:.2f}")
            summary = {"base_ms_s": base * 1000, "idle_us_s": idle_us, "kib_conn": kib_conn,
                       "racer_kib": racer_kib, "racer_us_s": racer_us,
                       "redis_racer_us_s": redis_racer_us, "move_us": move_us,
                       "redis_move_us": redis_move_us, "ops_move": ops_move,
                       "spec_event_us": spec_us, "check_ratios": ratios,
                       "redis_ratio": rc / predicted_r, "rate_per_process": rate}
            print("summary " + json.dumps(summary))
            await r.aclose()
            await cr.aclose()
        finally:
            for proc in reversed(procs):  # Redis last: the servers stop without errors
                if proc.poll() is None:
                    proc.terminate()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(10)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--racers", type=int, default=10000, help="racers of the check, in all")
    p.add_argument("--processes", type=int, default=4)
    p.add_argument("--move-every", type=float, default=20.0,
                   help="seconds between two actions of one racer in the check")
    p.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    p.add_argument("--idle", type=int, default=2000, help="idle connections (calibration)")
    p.add_argument("--idle-racers", type=int, default=2000,
                   help="racers who never move (calibration)")
    p.add_argument("--cal-racers", type=int, default=500, help="racers (calibration)")
    p.add_argument("--spectators", type=int, default=500, help="spectators (calibration)")
    p.add_argument("--spec-moves", type=float, default=10.0,
                   help="moves per second of the watched race (calibration)")
    p.add_argument("--rates", default="",
                   help="also measure a move's cost at these moves per second (a comma list)")
    p.add_argument("--skip-check", action="store_true",
                   help="calibrate only (with --rates: a move's cost against the rate)")
    p.add_argument("--client", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.client:
        asyncio.run(client(json.loads(args.client)))
    else:
        asyncio.run(main(args))
