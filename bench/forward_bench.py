"""A move forwarded to the process that owns its race, against a move on that process.

    .venv/bin/python bench/forward_bench.py [--moves 300] [--rounds 3] [--against tree:PATH]

Starts its own ``redis-server`` and two ``solrace serve --redis`` processes A and B. Races are
created on A (A owns them); one racer at a time plays a move, then undoes it, paced at one
action every 10 ms (an idle service, not a saturated one), connected either to A (**local**)
or to B (**forwarded**: B sends each command to A's inbox, A commits it and sends the reply
back through B's). Rounds alternate local and forwarded; printed: the racer's round trip p50
and p90 per case and the ratio forwarded/local (goal: at most 2x). With ``--against`` the same
runs on another checkout first, on its own Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from solrace.tools.race_client import RaceClient

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server
from failover_bench import serve


async def one_tree(tree: Path | None, moves: int, rounds: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="forward_bench_") as tmp:
        rproc, rport = redis_server(tmp)
        url = f"redis://127.0.0.1:{rport}/0"
        a, a_addr = serve(url, tree)
        b, b_addr = serve(url, tree)
        out: dict[str, list[float]] = {"local": [], "forwarded": []}
        try:
            host = await RaceClient.connect(f"ws://{a_addr}/ws")
            for _ in range(rounds):
                for where, addr in (("local", a_addr), ("forwarded", b_addr)):
                    created = await host.create("scotch", players=1, undo=True)
                    race = created["race"]
                    c = await RaceClient.connect(f"ws://{addr}/ws", keep_events=False)
                    await c.join(race, name="x")
                    await host.start(race, created["host_token"])
                    move = (await c.wait_state(race, 10))["legal"][0]
                    rtts = []
                    for i in range(moves):
                        t = time.perf_counter()
                        if i % 2 == 0:
                            await c.move(race, move, seq=i + 1)
                        else:
                            await c.undo(race, seq=i + 1)
                        rtts.append(time.perf_counter() - t)
                        await asyncio.sleep(0.01)
                    out[where] += rtts[10:]  # the first ones warm the path up
                    await c.close()
            await host.close()
        finally:
            for proc in (a, b, rproc):
                proc.kill()
    return out


async def main(args: argparse.Namespace) -> None:
    runs: list[tuple[str, Path | None]] = []
    if args.against:
        runs.append((args.against, Path(args.against.removeprefix("tree:")).resolve()))
    runs.append(("this tree", None))
    for label, tree in runs:
        got = await one_tree(tree, args.moves, args.rounds)
        line = []
        for where in ("local", "forwarded"):
            xs = sorted(got[where])
            line.append(f"{where} p50 {statistics.median(xs) * 1000:.2f} ms, p90 "
                        f"{xs[int(len(xs) * 0.9)] * 1000:.2f} ms")
        ratio = statistics.median(got["forwarded"]) / statistics.median(got["local"])
        print(f"{label}: {'; '.join(line)}; forwarded/local p50 {ratio:.2f}x", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--moves", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--against", default="", help="tree:PATH, another checkout, run first")
    asyncio.run(main(p.parse_args()))
