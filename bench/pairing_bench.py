"""Quick-race pairing benchmark: visitors who click *Quick race*, on two ``solrace serve``
processes sharing one Redis, against the same on one embedded process (SQLite), in one run.

    .venv/bin/python bench/pairing_bench.py            # --visitors 1000 --rate 50 --phase 200

What it starts: its own ``redis-server`` (a free port, append-only file with ``appendfsync
everysec``, as compose.yaml), two ``solrace serve --redis`` processes A and B, and one embedded
``solrace serve`` (its own SQLite file), all with ``--countdown 0 --rate-limit 0 --http-rate 0
--pool 0`` (no solver: ``--par-seconds 0 --hint-seconds 0``) and ``--trust-proxy``.

Each visitor is a browser as the server sees it: ``GET /`` gives it the ``sr_player`` cookie,
it opens ``/ws`` with that cookie and sends ``set_name`` (a unique name: it becomes a player, a
guest). With ``--accounts`` it also sets a password (an account: its races are rated; one
scrypt each, ~50 ms of a server's CPU, outside the timing); without, its seeks are casual
(guests play casual races only).
Every visitor comes from an address of its own (``X-Forwarded-For``, hence ``--trust-proxy``):
the server guards against a flood of new players from one address (a token bucket), and 1,000
visitors are 1,000 homes.
All identities are made first (``--visitors`` for the two processes on Redis, visitor *i* on A
or B by turns, and as many for the embedded process), outside the timing.

Then the visitors arrive at ``--rate`` per second on a fixed schedule (visitor *k* of a phase
at start + *k* / rate, whatever the ones before it cost): each sends ``seek`` (Scotch, 300 s,
rated with ``--accounts``, else casual; ``bot_after: 0``: never a bot); on ``paired`` (the
reply to his ``seek`` if somebody was waiting, else an event) it sends ``join`` with its token.
With ``--countdown 0`` the race starts as soon as both sat. Measured per pair: from the
``seek`` of the second visitor (the one whose ``seek`` found the other waiting) to the moment
**both** have the race's start (its ``started`` event, or a snapshot already ``running``).
Consecutive visitors are on different processes, so nearly every Redis pair spans both.

Phases: the arrivals are cut into phases of ``--phase`` visitors, alternating Redis pair and
embedded process (these machines' speed drifts within a minute; each setup gets every other
phase). ``--phase 1000`` runs each setup's 1,000 arrivals in one go.

By default the visitors then stay in their races (as racers would, for minutes): the races pile
up, 500 per setup. ``--resign``: each visitor resigns as soon as his race started (untimed), so
races end at once and are scored during the arrivals; few are unfinished at any moment.

Checked: every visitor paired exactly once (one ``paired``, no second one arriving later), none
lost (each paired and started within ``--timeout``), every race with exactly its two visitors.
Afterwards (untimed) everyone still racing resigns, and every race must be scored once (one
``ratings`` per race, with two changes when rated, none when casual).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server
from race_bench import cpu_seconds, own_cpu, pct, start

SEEK = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}
#: Set by --accounts: visitors with a password, rated races.
ACCOUNTS = False
FLAGS = ["--countdown", "0", "--rate-limit", "0", "--http-rate", "0", "--pool", "0",
         "--par-seconds", "0", "--hint-seconds", "0", "--trust-proxy"]


def serve(*extra: str) -> tuple[subprocess.Popen[str], str]:
    return start([sys.executable, "-m", "solrace", "serve", "--port", "0", *FLAGS, *extra])


def address(setup: int, i: int) -> str:
    """A client address of its own for visitor ``i`` of ``setup`` (10.setup.x.y)."""
    return f"10.{setup}.{i // 250}.{i % 250 + 1}"


async def page_cookie(addr: str, forwarded: str) -> str:
    """``GET /`` as a browser's first visit: the ``sr_player`` key the answer sets."""
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET / HTTP/1.1\r\nHost: {addr}\r\nAccept: text/html\r\n"
                     f"X-Forwarded-For: {forwarded}\r\nConnection: close\r\n\r\n".encode())
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    for line in head.split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "set-cookie" and value.strip().startswith("sr_player="):
            return value.strip().split(";", 1)[0].split("=", 1)[1]
    raise RuntimeError(f"no sr_player cookie in {head.splitlines()[0]!r}")


@dataclass
class Visitor:
    name: str
    client: RaceClient
    seek_at: float = 0.0
    paired_at: float = 0.0
    started_at: float = 0.0
    second: bool = False  # his seek found the other waiting
    race: str | None = None
    via: str = ""  # how the start reached him: "started" or "snapshot"
    paired: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # the race's racers, from his snapshot
    error: str | None = None
    resigned: bool = False


async def make_visitors(setup: int, label: str, addrs: list[str], count: int,
                        concurrency: int = 32) -> list[Visitor]:
    """``count`` visitors, visitor ``i`` on ``addrs[i % len(addrs)]``: a cookie from ``GET /``,
    a socket with it, a unique name."""
    out: list[Visitor | None] = [None] * count
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        addr = addrs[i % len(addrs)]
        forwarded = address(setup, i)
        async with gate:
            key = await page_cookie(addr, forwarded)
            client = await RaceClient.connect(f"ws://{addr}/ws", additional_headers={
                "Cookie": f"sr_player={key}", "X-Forwarded-For": forwarded})
            name = f"{label}{i:04d}"
            me = await client.request({"type": "set_name", "name": name}, timeout=30)
            assert me["player"]["name"] == name, me
            if ACCOUNTS:
                await client.request({"type": "set_password", "password": name + " password"},
                                     timeout=60)
            out[i] = Visitor(name, client)

    await asyncio.gather(*(one(i) for i in range(count)))
    return [v for v in out if v is not None]


async def arrive(v: Visitor, at: float, timeout: float, resign: bool = False) -> None:
    """At loop time ``at``: seek, join when paired, note when the race started for him (and
    with ``resign``, resign at once)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, at - loop.time()))
    client = v.client
    try:
        async with asyncio.timeout(timeout):
            v.seek_at = time.perf_counter()
            reply = await client.request({**SEEK, "rated": ACCOUNTS}, timeout=timeout)
            if reply["type"] == "paired":
                v.second = True
                paired = reply
            else:
                assert reply["type"] == "seeking", reply
                while True:
                    paired = await client.events.get()
                    if paired.get("type") == "paired":
                        break
            v.paired_at = time.perf_counter()
            v.paired.append(paired)
            v.race = race = paired["race"]
            await client.join(race, token=paired["token"])
            while True:
                msg = await client.events.get()
                if msg.get("race") != race:
                    if msg.get("type") == "paired":
                        v.paired.append(msg)
                    continue
                if msg["type"] == "snapshot":
                    v.names = sorted(p["name"] for p in msg["players"])
                    if msg["status"] == "running":
                        v.via = "snapshot"
                        break
                elif msg["type"] in ("started", "state"):
                    v.via = "started" if msg["type"] == "started" else "state"
                    break
            v.started_at = time.perf_counter()
            if resign:
                await client.resign(race)
                v.resigned = True
    except Exception as exc:
        v.error = f"{type(exc).__name__}: {exc}"


@dataclass
class Phase:
    latencies: list[float]  # per pair, seconds
    #: Per pair, from the second visitor's seek: his ``paired`` reply, the first one's
    #: ``paired`` event, then from the later ``paired`` to both started.
    parts: list[tuple[float, float, float]]
    pairs: int
    lost: list[str]
    cpu: dict[str, float]
    seconds: float
    load: float
    lag: float  # the worst lateness of this process's event loop (a 10 ms tick), seconds


async def run_phase(visitors: list[Visitor], rate: float, timeout: float,
                    pids: dict[str, int], resign: bool) -> Phase:
    loop = asyncio.get_running_loop()
    cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
    cpu0["load client"] = own_cpu()
    lag = 0.0

    async def ticker() -> None:  # is this process (the visitors) keeping up?
        nonlocal lag
        while True:
            t = loop.time()
            await asyncio.sleep(0.01)
            lag = max(lag, loop.time() - t - 0.01)

    ticking = asyncio.create_task(ticker())
    t0 = loop.time() + 0.2
    began = time.perf_counter()
    await asyncio.gather(*(arrive(v, t0 + k / rate, timeout, resign)
                           for k, v in enumerate(visitors)))
    seconds = time.perf_counter() - began
    ticking.cancel()
    cpu = {k: cpu_seconds(p) - cpu0[k] for k, p in pids.items()}
    cpu["load client"] = own_cpu() - cpu0["load client"]
    by_race: dict[str, list[Visitor]] = {}
    for v in visitors:
        if v.race is not None:
            by_race.setdefault(v.race, []).append(v)
    lost = [f"{v.name}: {v.error}" for v in visitors if v.error is not None]
    latencies = []
    parts = []
    for race, both in by_race.items():
        if len(both) != 2:
            lost.append(f"race {race} has {len(both)} of the visitors: "
                        f"{[v.name for v in both]}")
            continue
        seconds_ = [v for v in both if v.second]
        if len(seconds_) != 1:
            lost.append(f"race {race}: {len(seconds_)} visitors were paired by their own seek")
            continue
        if any(v.error for v in both):
            continue
        names = sorted(v.name for v in both)
        for v in both:
            if v.names and v.names != names:
                lost.append(f"race {race}: {v.name} sees racers {v.names}, expected {names}")
        second = seconds_[0]
        first = next(v for v in both if v is not second)
        latencies.append(max(v.started_at for v in both) - second.seek_at)
        parts.append((second.paired_at - second.seek_at, first.paired_at - second.seek_at,
                      max(v.started_at for v in both) - max(v.paired_at for v in both)))
    return Phase(latencies, parts, len(by_race), lost, cpu, seconds, os.getloadavg()[0], lag)


async def settle(visitors: list[Visitor], timeout: float) -> tuple[int, int, list[str]]:
    """Untimed: more ``paired`` after the phase? Then everyone resigns; every race must get one
    ``ratings`` (two changes if rated). (races scored once, extra ``paired`` seen, problems)"""
    problems: list[str] = []
    races: dict[str, list[Visitor]] = {}
    for v in visitors:
        if v.race is not None:
            races.setdefault(v.race, []).append(v)
    gate = asyncio.Semaphore(32)

    async def resign(v: Visitor) -> None:
        async with gate:
            try:
                await v.client.resign(v.race or "")
            except Exception as exc:
                problems.append(f"{v.name} could not resign: {exc}")

    await asyncio.gather(*(resign(v) for v in visitors if v.race is not None and not v.resigned))
    scored = 0
    extra_paired = 0

    async def ratings(v: Visitor) -> int:
        got = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while True:
                    msg = await v.client.events.get()
                    if msg.get("type") == "paired":
                        v.paired.append(msg)
                    if msg.get("type") == "ratings" and msg.get("race") == v.race:
                        got += 1
                        if len(msg["changes"]) != (2 if ACCOUNTS else 0):
                            problems.append(f"race {v.race}: ratings with "
                                            f"{len(msg['changes'])} changes")
                        break
        # Anything else already queued (a second ratings, a late paired)?
        while not v.client.events.empty():
            msg = v.client.events.get_nowait()
            if msg.get("type") == "paired":
                v.paired.append(msg)
            if msg.get("type") == "ratings" and msg.get("race") == v.race:
                got += 1
        return got

    firsts = [both[0] for both in races.values()]
    counts = await asyncio.gather(*(ratings(v) for v in firsts))
    for v, n in zip(firsts, counts, strict=True):
        if n == 1:
            scored += 1
        else:
            problems.append(f"race {v.race}: {n} ratings messages")
    for v in visitors:
        if len(v.paired) > 1:
            extra_paired += len(v.paired) - 1
            problems.append(f"{v.name} paired {len(v.paired)} times: "
                            f"{[p['race'] for p in v.paired]}")
    return scored, extra_paired, problems


def summary(label: str, phases: list[Phase]) -> tuple[list[float], str]:
    lat = [x for p in phases for x in p.latencies]
    if not lat:
        return lat, f"{label}: no pair started"
    p99s = [pct(p.latencies, 0.99) * 1000 for p in phases if p.latencies]
    parts = [x for p in phases for x in p.parts]
    med = [statistics.median(x[i] for x in parts) * 1000 for i in range(3)]
    lost = sum(len(p.lost) for p in phases)
    line = (f"{label}: {sum(p.pairs for p in phases)} pairs ({len(lat)} timed, {lost} "
            f"visitors lost or wrong), seek -> both started: p50 "
            f"{pct(lat, 0.5) * 1000:.1f} ms, p99 {pct(lat, 0.99) * 1000:.1f} ms, max "
            f"{max(lat) * 1000:.1f} ms (phases' p99 {min(p99s):.1f}-{max(p99s):.1f} ms, "
            f"median {statistics.median(p99s):.1f}); medians: seek -> his paired "
            f"{med[0]:.1f} ms, -> the other's paired {med[1]:.1f} ms, then join -> both "
            f"started {med[2]:.1f} ms")
    return lat, line


async def one_run(args: argparse.Namespace, run: int,
                  phases: dict[str, list[Phase]]) -> None:
    """Fresh servers (and Redis), identities, the alternating phases, then the checks."""
    procs: list[subprocess.Popen[Any]] = []
    with tempfile.TemporaryDirectory(prefix="pairing_bench_") as tmp:
        try:
            rproc, rport = redis_server(tmp)
            procs.append(rproc)
            url = f"redis://127.0.0.1:{rport}/0"
            a, a_addr = serve("--redis", url)
            b, b_addr = serve("--redis", url)
            e, e_addr = serve("--db", f"{tmp}/embedded.db")
            procs += [a, b, e]
            t = time.perf_counter()
            cluster = await make_visitors(run * 2 + 1, "r", [a_addr, b_addr], args.visitors)
            made_r = time.perf_counter() - t
            t = time.perf_counter()
            embedded = await make_visitors(run * 2 + 2, "e", [e_addr], args.visitors)
            made_e = time.perf_counter() - t
            print(f"run {run + 1}: identities (GET /, socket, set_name; 32 at a time): Redis pair "
                  f"{args.visitors / made_r:,.0f}/s, embedded {args.visitors / made_e:,.0f}/s",
                  flush=True)
            # This process holds thousands of sockets: no collector pass in a phase (it would
            # show as the servers' latency).
            gc.collect()
            gc.freeze()
            setups = {"redis": (cluster, {"A": a.pid, "B": b.pid, "redis": rproc.pid}),
                      "embedded": (embedded, {"E": e.pid})}
            for n, lo in enumerate(range(0, args.visitors, args.phase)):
                for label, (visitors, pids) in setups.items():
                    chunk = visitors[lo:lo + args.phase]
                    gc.disable()
                    ph = await run_phase(chunk, args.rate, args.timeout, pids, args.resign)
                    gc.enable()
                    phases[label].append(ph)
                    cpu = ", ".join(f"{k} {v / max(1, ph.pairs) * 1000:.1f} ms"
                                    for k, v in ph.cpu.items())
                    print(f"phase {n + 1} {label:8}: {ph.pairs} pairs in {ph.seconds:.1f} s, "
                          f"p50 {pct(ph.latencies, 0.5) * 1000:.1f} ms, p99 "
                          f"{pct(ph.latencies, 0.99) * 1000:.1f} ms, max "
                          f"{max(ph.latencies, default=0) * 1000:.1f} ms; CPU per pair: {cpu}; "
                          f"lost {len(ph.lost)}; load {ph.load:.2f}; this process's loop late by "
                          f"{ph.lag * 1000:.0f} ms at most", flush=True)
                    for problem in ph.lost[:5]:
                        print("   ", problem)
                    await asyncio.sleep(0.5)
            via = {label: {k: sum(1 for v in vs if v.via == k)
                           for k in ("started", "snapshot", "state")}
                   for label, (vs, _) in setups.items()}
            print(f"  how the start reached the visitors: {via}")
            for label, (visitors, _) in setups.items():
                lost = [x for p in phases[label][-len(range(0, args.visitors, args.phase)):]
                        for x in p.lost]
                scored, extra, problems = await settle(visitors, args.timeout)
                paired = sum(1 for v in visitors if v.race is not None)
                print(f"  {label}: {paired}/{len(visitors)} visitors paired, {extra} paired "
                      f"twice, {len(lost)} lost or wrong; after everyone resigned: "
                      f"{scored} races scored once")
                for problem in (lost + problems)[:10]:
                    print("     ", problem)
            for visitors, _ in setups.values():
                await asyncio.gather(*(v.client.close() for v in visitors))
            gc.unfreeze()
        finally:
            for proc in reversed(procs):
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)


async def main(args: argparse.Namespace) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * args.visitors + 1024)),
                                                hard))
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.visitors} visitors "
          f"per setup at {args.rate:g}/s in phases of {args.phase}, {args.repeat} run(s), "
          f"visitors {'resign at once' if args.resign else 'stay in their races'}, "
          f"{'accounts (rated)' if ACCOUNTS else 'guests (casual)'}; "
          f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    phases: dict[str, list[Phase]] = {"redis": [], "embedded": []}
    for run in range(args.repeat):
        await one_run(args, run, phases)
    print("\nresults (all phases of all runs):")
    for label, ph in phases.items():
        _, line = summary(label, ph)
        print("  " + line)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--visitors", type=int, default=1000, help="visitors per setup (even)")
    p.add_argument("--rate", type=float, default=50.0, help="arrivals per second")
    p.add_argument("--phase", type=int, default=200,
                   help="visitors per phase; phases alternate between the setups")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs, each with fresh servers and visitors; the figures pool them")
    p.add_argument("--resign", action="store_true",
                   help="each visitor resigns as soon as his race started (races end at once)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds a visitor waits to be paired and started before he is lost")
    p.add_argument("--accounts", action="store_true",
                   help="visitors set a password: rated races (else guests: casual)")
    parsed = p.parse_args()
    ACCOUNTS = parsed.accounts
    asyncio.run(main(parsed))
