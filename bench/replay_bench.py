"""Replays of long races against the event loop: does serving them stall everyone else?

    .venv/bin/python bench/replay_bench.py [--races 8] [--actions 10000] [--against tree:PATH]

Writes ``--races`` finished Scotch races of ``--actions`` moves and undos each into a SQLite
file, starts ``solrace serve`` on it (``--trust-proxy``: each request comes from an address
of its own through ``X-Forwarded-For``), and asks for every race's replay at once, as browsers
do (``Accept-Encoding: gzip``), none of them cached yet, while one WebSocket client sends a
``ping`` every 10 ms and waits for its ``pong``. Printed: the pings' round trip while the
replays were under way (p50, p99, worst), and how long the replays took. With ``--against``
the same runs on another checkout first, on a copy of the same file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient

sys.path.insert(0, str(Path(__file__).parent))
from race_bench import start


def long_races(db: Path, races: int, actions: int) -> list[str]:
    """Finished races whose racer made ``actions`` moves and undos, straight into ``db``."""
    store = SQLiteStore(db)
    ids = []
    for n in range(races):
        rid = f"long{n}"
        race = Race(rid, "scotch", 1 + n, "salt", Options(1, 86400, True), 1000, "host", 0)
        store.add_race(race)
        store.append(race.join("ann", f"tok{n}", 1000).log)
        store.append(race.start("host", 1000).log)
        race.tick(1000)
        move = race.racers["p1"].game.legal_moves()[0].text()
        for seq in range(1, actions + 1):
            out = (race.move("p1", move, seq, 2000 + seq) if seq % 2
                   else race.undo("p1", seq, 2000 + seq))
            store.append(out.log)
        store.append(race.resign("p1", 90_000).log)
        store.mark_finished(rid, 90_000)
        store.commit()
        ids.append(rid)
    store.close()
    return ids


async def fetch(addr: str, path: str, n: int) -> tuple[int, float]:
    """GET ``path`` from address 198.51.100.n; (bytes read, seconds)."""
    host, port = addr.rsplit(":", 1)
    t = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-For: 198.51.100.{n}\r\n"
                 "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n".encode())
    body = await reader.read()
    writer.close()
    head = body[:12]
    assert b" 200" in head, body[:200]
    return len(body), time.perf_counter() - t


async def one_tree(db: Path, ids: list[str], tree: Path | None) -> dict[str, float]:
    env = None
    if tree is not None:
        env = {**os.environ, "PYTHONPATH": f"{tree}/shared:{tree}/server"}
    proc, addr = start([sys.executable, "-m", "solrace", "serve", "--port", "0", "--db", str(db),
                        "--trust-proxy", "--http-rate", "0", "--rate-limit", "0",
                        "--par-seconds", "0", "--hint-seconds", "0"], env)
    try:
        pinger = await RaceClient.connect(f"ws://{addr}/ws")
        for _ in range(20):  # warm
            await pinger.ping()
        rtts: list[float] = []
        done = False

        async def pings() -> None:
            while not done:
                t = time.perf_counter()
                await pinger.ping()
                rtts.append(time.perf_counter() - t)
                await asyncio.sleep(0.01)

        task = asyncio.create_task(pings())
        t0 = time.perf_counter()
        got = await asyncio.gather(*(fetch(addr, f"/api/races/{rid}/replay/p1", n + 1)
                                     for n, rid in enumerate(ids)))
        took = time.perf_counter() - t0
        done = True
        await task
        await pinger.close()
    finally:
        proc.terminate()
        proc.wait()
    xs = sorted(rtts)
    return {"p50": statistics.median(xs) * 1000,
            "p99": xs[min(len(xs) - 1, round(0.99 * (len(xs) - 1)))] * 1000,
            "worst": xs[-1] * 1000, "pings": len(xs), "took": took,
            "bytes": statistics.median(b for b, _ in got)}


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="replay_bench_") as tmp:
        db = Path(tmp) / "long.db"
        ids = long_races(db, args.races, args.actions)
        runs: list[tuple[str, Path | None]] = []
        if args.against:
            runs.append((args.against, Path(args.against.removeprefix("tree:")).resolve()))
        runs.append(("this tree", None))
        for label, tree in runs:
            for n in range(args.repeat):
                copy = Path(tmp) / f"copy{n}-{len(label)}.db"
                shutil.copy(db, copy)
                r = await one_tree(copy, ids, tree)
                print(f"{label} run {n + 1}: ping p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, "
                      f"worst {r['worst']:.1f} ms over {r['pings']} pings; {args.races} replays "
                      f"of {args.actions:,} actions in {r['took']:.2f} s "
                      f"({r['bytes'] / 1024:.0f} KiB each, gzipped)", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--races", type=int, default=8)
    p.add_argument("--actions", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--against", default="", help="tree:PATH, another checkout, run first")
    args = p.parse_args()
    asyncio.run(main(args))
