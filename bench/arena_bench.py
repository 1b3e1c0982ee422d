"""Arena benchmark (issue 29): an arena of 1,000 entrants over two processes on one Redis —
from a race's end to its racers' next ``paired``, from a race's end to the watchers' table
that holds its result, and the failover of the process that pairs the arena.

    .venv/bin/python bench/arena_bench.py                 # --entrants 1000 --minutes 3
    .venv/bin/python bench/arena_bench.py --quick         # 100 entrants, 40 s: a smoke run

What it starts: its own ``redis-server`` (a free port, append-only file, ``appendfsync
everysec``), two ``solrace serve --redis`` processes A and B (``--countdown 0 --rate-limit 0
--http-rate 0 --pool 0``, no solver, ``--trust-proxy``, ``--arenas off``: no house arena
beside the bench's), and ``--workers`` client processes (``bench/arena_clients.py``: the
entrants, each a guest from an address of its own, half of them on A and half on B; their races
are casual). An account on A creates the arena (Scotch, races of 300 s, ``--start-in`` seconds
ahead); every entrant joins it before the start; four watchers (``arena_watch``, two on each
process) follow the table. Each race: both take their seats, move every ``--think`` seconds
(random legal moves, human-paced), and the first whose ``--race`` seconds are up resigns (so
every race ends by a resign, and its result is known to both: the resigner lost).

``--kill-at`` of the way through (default half), the process that owns the arena (its lease in
Redis, ``sr:{arena}:lease``) is killed with SIGKILL; its entrants and watchers reconnect to the
other process. After ``--minutes`` every entrant pauses and resigns the race he is in; then the
whole table (``GET /api/arenas/{arena}``) is compared with what the entrants saw.

Measured (monotonic clock, stamped when a frame arrives; the same clock in every process):

- **end → paired**, per racer and race: from the moment the racer first knew his race was over
  (the reply to his ``resign``, or the ``race_over`` event for his opponent) to his next
  ``paired``. The arena pairs within :data:`~solrace.core.arena.PAIR_EVERY_MS` (100 ms) of the
  second entrant to wait, by design. Samples whose interval holds the failover are counted
  apart; the arena's start (everyone paired at once) too.
- **end → table**, per race and watcher: from the race's end (the first of its racers to know)
  to the first ``arena_standings`` whose ``v`` is at least that of the race's ``result`` entry in
  the arena's log (read from Redis at the end: the n-th entry has ``v`` n). ``arena_standings``
  goes out at most every ``STANDINGS_EVERY`` (50 ms): the figure is also given less the wait
  that throttle imposed (the previous table's arrival + 50 ms, when later than the race's end).
- **failover**: from the kill to the first ``paired`` anyone gets after it, and to the next
  ``paired`` of each entrant who was waiting at the kill (on the surviving process, and
  all); then **points**: every entrant's points and races in the final table against his own
  results (a win 2, on a streak 4, a loss 0), every race's result once in the log.
- **cost**: CPU of A, B and redis-server over the run, the load average, and the bench's own
  clients: their CPU share and how late their event loops woke (a 50 ms tick): the figures are
  the servers' only while the clients keep up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import msgpack
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).parent))
from arena_clients import Client, Watcher, points
from cluster_bench import redis_server
from pairing_bench import FLAGS, page_cookie
from race_bench import cpu_seconds, pct, start

HERE = Path(__file__).parent
#: What the throttle of ``arena_standings`` holds a table back at most (service/arenas.py).
STANDINGS_EVERY = 0.05


#: e.g. ARENA_BENCH_PROFILE=/tmp/prof (with --kill-at 0): each server runs under cProfile and
#: writes DIR/A.prof, DIR/B.prof when it stops.
PROFILE = os.environ.get("ARENA_BENCH_PROFILE", "")


def serve(name: str, redis_url: str) -> tuple[subprocess.Popen[str], str]:
    """``solrace serve`` on Redis with pairing_bench's flags and no house arenas."""
    profile = ["-m", "cProfile", "-o", f"{PROFILE}/{name}.prof"] if PROFILE else []
    return start([sys.executable, *profile, "-m", "solrace", "serve", "--port", "0", *FLAGS,
                  "--redis", redis_url, "--arenas", "off"])


def fetch(url: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=30) as res:
        return json.loads(res.read())


class Worker:
    """A client process (bench/arena_clients.py) and its lines."""

    def __init__(self, cfg: dict[str, Any], where: Path) -> None:
        where.write_text(json.dumps(cfg))
        self.out = Path(cfg["out"])
        self.proc = subprocess.Popen([sys.executable, str(HERE / "arena_clients.py"), str(where)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    async def expect(self, word: str, timeout: float) -> None:
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            got = await asyncio.to_thread(self.proc.stdout.readline)
        if got.strip() != word:
            raise SystemExit(f"client process said {got!r}, not {word!r}")

    def say(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def result(self) -> dict[str, Any]:
        return json.loads(self.out.read_text())


def ms(values: list[float], q: float) -> str:
    return f"{pct(values, q) * 1000:.0f}" if values else "-"


def line(label: str, values: list[float]) -> str:
    if not values:
        return f"  {label}: no sample"
    return (f"  {label}: p50 {ms(values, 0.5)} ms, p90 {ms(values, 0.9)} ms, p99 "
            f"{ms(values, 0.99)} ms, max {max(values) * 1000:.0f} ms ({len(values)} samples)")


async def owner_of(redis: Redis, aid: str) -> str:
    """The pid (``{os pid}-{hex}``) in the arena's lease."""
    raw = await redis.get(f"sr:{{{aid}}}:lease")
    holder = raw.decode() if isinstance(raw, bytes) else str(raw)
    return holder.rpartition(":")[0]


async def arena_log(redis: Redis, aid: str) -> list[list[Any]]:
    """The arena's log entries, [at, kind, data] each (the n-th has ``v`` n)."""
    raw = await redis.lrange(f"sr:{{{aid}}}:tlog", 0, -1)
    return [msgpack.unpackb(r, raw=False) for r in raw]


async def final_table(http: str, aid: str, races: int, timeout: float = 30.0) -> dict[str, Any]:
    """The whole table once nobody races and it counts ``races`` races (or after
    ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        view = await asyncio.to_thread(fetch, f"{http}/api/arenas/{aid}")
        rows = view["standings"]
        done = not any(r["racing"] for r in rows) and sum(r["races"] for r in rows) >= races
        if done or loop.time() > deadline:
            return dict(view)
        await asyncio.sleep(0.5)


async def run(args: argparse.Namespace) -> int:
    seconds = args.minutes * 60
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.entrants} entrants, "
          f"{args.workers} client processes, {args.watchers} watchers, {seconds:.0f} s of "
          f"racing, races of {args.race[0]:g}-{args.race[1]:g} s, a move every "
          f"{args.think[0]:g}-{args.think[1]:g} s, kill at "
          f"{args.kill_at:.0%}; load average before: {os.getloadavg()[0]:.2f}", flush=True)
    procs: list[subprocess.Popen[Any]] = []
    workers: list[Worker] = []
    watchers: list[Watcher] = []
    failed = 0
    with tempfile.TemporaryDirectory(prefix="arena_bench_") as tmp:
        try:
            rproc, rport = redis_server(tmp)
            procs.append(rproc)
            url = f"redis://127.0.0.1:{rport}/0"
            pa, a = serve("A", url)
            pb, b = serve("B", url)
            procs += [pa, pb]
            servers = {"A": (pa, a), "B": (pb, b)}
            redis = Redis.from_url(url)
            t = time.monotonic()
            for w in range(args.workers):
                workers.append(Worker({
                    "addrs": [a, b], "indices": list(range(w, args.entrants, args.workers)),
                    "prefix": "e", "net": 20, "race": args.race, "think": args.think,
                    "seed": args.seed, "out": f"{tmp}/worker{w}.json"}, Path(f"{tmp}/w{w}.json")))
            await asyncio.gather(*(w.expect("ready", 600) for w in workers))
            print(f"identities: {args.entrants} guests (GET /, socket, set_name) in "
                  f"{time.monotonic() - t:.1f} s", flush=True)
            # The arena's creator: an account on A (A owns the arena from its creation).
            key = await page_cookie(a, "10.21.0.1")
            host = await Client.open(a, {"Cookie": f"sr_player={key}",
                                         "X-Forwarded-For": "10.21.0.1"}, lambda m: None, None)
            await host.request({"type": "set_name", "name": "Host"})
            await host.request({"type": "set_password", "password": "Host password"}, 60)
            minutes = math.ceil((args.start_in + seconds) / 60) + 2
            aid = (await host.request({"type": "arena_create", "game": "scotch",
                                       "minutes": minutes, "starts_in": args.start_in,
                                       "time_limit": 300, "name": "Bench arena"}))["arena"]
            view = await host.request({"type": "arena_watch", "arena": aid})
            start_wall = view["starts_at"] / 1000
            for n in range(args.watchers):
                watcher = Watcher([a, b], n % 2, f"10.22.0.{n + 1}", aid)
                await watcher.start()
                watchers.append(watcher)
            t = time.monotonic()
            for w in workers:
                w.say(f"join {aid}")
            await asyncio.gather(*(w.expect("joined", 600) for w in workers))
            joined_in = time.monotonic() - t
            left = start_wall - time.time()
            print(f"arena {aid}: every entrant joined in {joined_in:.1f} s; it starts in "
                  f"{left:.1f} s", flush=True)
            await asyncio.sleep(max(0.0, left))
            start = time.monotonic()
            pids = {"A": pa.pid, "B": pb.pid, "redis": rproc.pid}
            cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
            cpu1: dict[str, float] = {}
            loads = [os.getloadavg()[0]]
            killed: str | None = None
            kill_at = None
            if args.kill_at > 0:
                await asyncio.sleep(seconds * args.kill_at)
                owner = await owner_of(redis, aid)
                killed = next(k for k, (p, _) in servers.items()
                              if owner.startswith(f"{p.pid}-"))
                proc = servers[killed][0]
                cpu1[killed] = cpu_seconds(proc.pid) - cpu0[killed]
                loads.append(os.getloadavg()[0])
                kill_at = time.monotonic()
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                print(f"{kill_at - start:.1f} s: killed {killed} (it owned the arena) at "
                      f"{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}",
                      flush=True)
            await asyncio.sleep(max(0.0, start + seconds - time.monotonic()))
            end = time.monotonic()
            loads.append(os.getloadavg()[0])
            for k, p in pids.items():
                if k != killed:
                    cpu1[k] = cpu_seconds(p) - cpu0[k]
            for w in workers:
                w.say("stop")
            await asyncio.gather(*(w.expect("done", 180) for w in workers))
            results = [w.result() for w in workers]
            survivor = next(k for k in servers if k != killed)
            entrants = [e for r in results for e in r["entrants"]]
            seen = {s["race"] for e in entrants for s in e["seats"] if s["outcome"]}
            view = await final_table(f"http://{servers[survivor][1]}", aid, 2 * len(seen))
            log = await arena_log(redis, aid)
            await redis.aclose()
            if args.dump:
                Path(args.dump).write_text(json.dumps({
                    "log": log, "entrants": entrants, "table": view, "start": start,
                    "kill_at": kill_at, "watchers": [w.got for w in watchers]}))
            failed = report(args, entrants, results, watchers, view, log, start, end,
                            start_wall, kill_at, killed, cpu1, loads)
            await host.close()
        finally:
            for watcher in watchers:
                await watcher.close()
            for w in workers:
                if w.proc.poll() is None:
                    w.proc.kill()
                w.proc.wait()
            for proc in reversed(procs):  # the servers before their Redis
                if proc.poll() is None:
                    proc.terminate()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(10)
    return failed


def report(args: argparse.Namespace, entrants: list[dict[str, Any]],
           results: list[dict[str, Any]], watchers: list[Watcher], view: dict[str, Any],
           log: list[list[Any]], start: float, end: float, start_wall: float,
           kill_at: float | None, killed: str | None, cpu: dict[str, float],
           loads: list[float]) -> int:
    """Print the figures and the checks; the number of checks that failed."""
    problems: list[str] = []
    seconds = end - start
    # ------------------------------------------------------------------ end -> paired
    first_after = min((s["next_paired_at"] for e in entrants for s in e["seats"]
                       if s["next_paired_at"] and kill_at and s["next_paired_at"] > kill_at),
                      default=None)
    resumed = first_after if first_after is not None else kill_at
    steady: list[float] = []
    before_kill: list[float] = []
    after: list[float] = []
    across: list[tuple[float, float, bool]] = []  # (end, next paired, stayed on the survivor)
    for e in entrants:
        moved = any(kill_at and lost <= kill_at + 5 and back >= kill_at
                    for lost, back in e["reconnects"])
        for s in e["seats"]:
            if s["end_at"] is None or s["next_paired_at"] is None or s["end_at"] > end:
                continue
            lat = s["next_paired_at"] - s["end_at"]
            if kill_at is None or s["next_paired_at"] < kill_at:
                steady.append(lat)
                before_kill.append(lat)
            elif resumed is not None and s["end_at"] > resumed + 1.0:
                steady.append(lat)
                after.append(lat)
            else:
                across.append((s["end_at"], s["next_paired_at"], not moved))
    # The same, from the moment his opponent-to-be was free too (the later of their two
    # ends): what is left once someone to race is there, i.e. the arena's batch and the path.
    by_race: dict[str, list[tuple[float, float]]] = {}  # race -> (previous end, paired)
    for e in entrants:
        for before, s in zip(e["seats"], e["seats"][1:], strict=False):
            if before["end_at"] is not None and before["end_at"] <= end:
                by_race.setdefault(s["race"], []).append((before["end_at"], s["paired_at"]))
    both_free = [p - max(x for x, _ in two) for two in by_race.values() if len(two) == 2
                 for _, p in two
                 if kill_at is None or not (kill_at - 1.0 <= max(x for x, _ in two)
                                            <= (resumed or kill_at) + 1.0)]
    mono_start = start_wall - (time.time() - time.monotonic())
    first = [e["seats"][0]["paired_at"] - mono_start for e in entrants if e["seats"]]
    races = {s["race"] for e in entrants for s in e["seats"]}
    print(f"\n{len(races)} races in {seconds:.0f} s ({len(races) / seconds:.1f} a second), "
          f"{sum(len(e['seats']) for e in entrants) / max(1, len(entrants)):.1f} per entrant")
    print("race's end -> the racer's next paired (goal p99 <= 200 ms):")
    print(line("steady (failover excluded)", steady))
    if kill_at is not None:
        print(line("before the kill", before_kill))
        print(line("after the takeover", after))
    print(line("from both racers free (the later end of the two) to paired", both_free))
    print(line("the start: starts_at -> each entrant's first paired", first))
    # ------------------------------------------------------------------ end -> table
    ends: dict[str, float] = {}
    for e in entrants:
        for s in e["seats"]:
            if s["end_at"] is not None:
                ends[s["race"]] = min(ends.get(s["race"], math.inf), s["end_at"])
    result_v: dict[str, int] = {}
    counted: dict[str, int] = {}
    for n, (_, kind, data) in enumerate(log, 1):
        if kind == "result":
            result_v.setdefault(data["race"], n)
            counted[data["race"]] = counted.get(data["race"], 0) + 1
    table_lat: list[float] = []
    beyond: list[float] = []
    for w in watchers:
        got = sorted((at, v) for at, v, kind in w.got if kind == "arena_standings")
        for race, v in result_v.items():
            end_at = ends.get(race)
            if end_at is None or end_at > end or (kill_at is not None and resumed is not None
                                                  and kill_at - 1.0 <= end_at <= resumed + 1.0):
                continue
            i = next((i for i, (_, gv) in enumerate(got) if gv >= v), None)
            if i is None:
                continue
            at = got[i][0]
            table_lat.append(at - end_at)
            held = got[i - 1][0] + STANDINGS_EVERY if i > 0 else -math.inf
            beyond.append(at - max(end_at, held))
    print(f"race's end -> the watchers' arena_standings holding its result (goal p99 <= 100 "
          f"ms; the table goes out at most every {STANDINGS_EVERY * 1000:.0f} ms):")
    print(line(f"{len(watchers)} watchers, failover excluded", table_lat))
    print(line("less the throttle's wait", beyond))
    # ------------------------------------------------------------------ failover
    if kill_at is not None:
        print(f"failover: {killed} killed at {kill_at - start:.1f} s (goal: pairing again "
              f"within 2 s)")
        if first_after is not None:
            print(f"  kill -> the first paired after it: {(first_after - kill_at) * 1000:.0f} ms")
        waiting = [p - kill_at for e_, p, _ in across if e_ < kill_at]
        stayed = [p - kill_at for e_, p, on in across if e_ < kill_at and on]
        print(line("kill -> next paired, entrants waiting at the kill (all)", waiting))
        print(line("  of them on the surviving process", stayed))
        print(line("end -> next paired, races that ended during the outage",
                   [p - e_ for e_, p, _ in across if e_ >= kill_at]))
        backs = [back - lost for e in entrants for lost, back in e["reconnects"]]
        print(f"  {len(backs)} entrants reconnected to the survivor: socket back and "
              f"arena_join answered after p50 {ms(backs, 0.5)} ms, max "
              f"{max(backs, default=0) * 1000:.0f} ms")
    # ------------------------------------------------------------------ points
    rows = {r["player"]: r for r in view["standings"]}
    wrong = unseen = 0
    for e in entrants:
        mine = [s["outcome"] for s in e["seats"] if s["outcome"]]
        row = rows.get(e["player"])
        if row is None:
            problems.append(f"{e['name']} is not in the table")
            continue
        seats = len(e["seats"])
        if len(mine) < seats:
            unseen += 1  # a seat whose end he never saw: its points cannot be checked
            ok = row["races"] == seats
        else:
            ok = row["points"] == points(mine) and row["races"] == seats
        if not ok:
            wrong += 1
            if wrong <= 5:
                problems.append(f"{e['name']}: table {row['points']} points in {row['races']} "
                                f"races; his {seats} seats, results {''.join(mine)} = "
                                f"{points(mine)} points")
    twice = [r for r, n in counted.items() if n > 1]
    ended = {s["race"] for e in entrants for s in e["seats"] if s["outcome"]}
    missing = ended - set(result_v)
    unknown = [s["race"] for e in entrants for s in e["seats"] if not s["outcome"]]
    total = sum(r["points"] for r in view["standings"])
    print(f"points: {len(ended)} races ended, {len(result_v)} results in the log "
          f"({len(twice)} counted twice, {len(missing)} missing), {total} points in the table; "
          f"{len(entrants) - wrong}/{len(entrants)} entrants' table rows match their own "
          f"results (points and races; {unseen} of them had a seat whose end they did not "
          f"see: races only); {len(unknown)} such seats")
    if twice:
        problems.append(f"results counted twice: {twice[:5]}")
    if missing:
        problems.append(f"races with no result: {sorted(missing)[:5]}")
    if view.get("v") != len(log):
        problems.append(f"the table's v {view.get('v')} is not the log's length {len(log)}")
    errors = [f"{e['name']}: {x}" for e in entrants for x in e["errors"]
              if not x.startswith("reconnect:")]
    problems += errors[:5]
    # ------------------------------------------------------------------ cost
    cpu_line = ", ".join(f"{k} {v / seconds:.0%}" for k, v in cpu.items())
    print(f"CPU over the run (share of one core): {cpu_line}; load average "
          f"{', '.join(f'{x:.1f}' for x in loads)}")
    for n, r in enumerate(results):
        lag = r["lag"]
        print(f"  client process {n + 1}: {len(r['entrants'])} entrants, CPU "
              f"{r['cpu'] / r['wall']:.0%} of a core, loop late by p50 {lag['p50'] * 1000:.1f} "
              f"ms, p99 {lag['p99'] * 1000:.1f} ms, max {lag['max'] * 1000:.0f} ms"
              + (f"; {r['unfinished']} entrants did not stop" if r["unfinished"] else ""))
    if problems:
        print(f"PROBLEMS ({len(problems) + max(0, len(errors) - 5)}):")
        for p in problems:
            print("  " + p)
    return len(problems)


def pair(text: str) -> list[float]:
    lo, _, hi = text.partition(",")
    return [float(lo), float(hi or lo)]


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--entrants", type=int, default=1000)
    p.add_argument("--minutes", type=float, default=3.0, help="of racing, from the start")
    p.add_argument("--quick", action="store_true", help="a smoke run: 100 entrants, 40 s")
    p.add_argument("--workers", type=int, default=2, help="client processes")
    p.add_argument("--watchers", type=int, default=4, help="arena_watch connections (A, B...)")
    p.add_argument("--race", type=pair, default=[5.0, 25.0],
                   help="LO,HI: a racer resigns this many seconds after the start (uniform)")
    p.add_argument("--think", type=pair, default=[1.0, 3.0],
                   help="LO,HI: seconds between a racer's moves (uniform)")
    p.add_argument("--kill-at", type=float, default=0.5,
                   help="kill the arena's owner this far through the run (0: never)")
    p.add_argument("--start-in", type=int, default=0,
                   help="seconds from the arena's creation to its start (default: 10 + "
                        "entrants / 100)")
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--dump", help="write the arena's log, the entrants' seats and the "
                   "watchers' tables to this JSON file")
    parsed = p.parse_args()
    if parsed.quick:
        parsed.entrants, parsed.minutes = 100, 40 / 60
    parsed.start_in = parsed.start_in or int(10 + parsed.entrants / 100)
    sys.exit(1 if asyncio.run(run(parsed)) else 0)
