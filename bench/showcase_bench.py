"""The home page's live figures: what one look costs a process, and what sharing it on Redis
costs, against a baseline in the same run.

    .venv/bin/python bench/showcase_bench.py            # --races 1000 --visitors 5000 --rounds 9

1. **A look** (``Showcase.look``: every race held scanned for the running count and the
   featured race, every connection's visitor id put in a set), with ``--races`` races held
   (real ``Race`` objects, running, two racers each, a mix of quick, bot, public and private
   races with ratings drawn from a fixed RNG) and ``--visitors`` connections (ids of players,
   browsers and bare connections, a tenth of them a second tab). The server looks at most every
   ``LIVE_EVERY_S`` seconds however many ask: the share of one core a process spends on it is
   the look's time divided by that interval. Baseline: one move's rules work as the server does
   it (``push``, ``legal_by_text()``, ``pop``) on a Scotch position. CPU time
   (``time.process_time``), medians over rounds.
2. **An exchange on Redis** (``SharedFigures.exchange``: the publish script with the visitors'
   HyperLogLog, then everyone's figures read back), on a private ``redis-server``, with the
   same visitors and four processes' figures in it; wall time of the round trips, and Redis's
   own CPU (``INFO cpu``) per exchange.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import solrules
from solrace.cluster.live import SharedFigures
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.runtime.redis_connect import connect
from solrace.service.showcase import Showcase

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server

KINDS = [("quick", False), ("bot", False), (None, True), (None, False)]


def races(n: int, rng: random.Random) -> list[Race]:
    held = []
    for i in range(n):
        kind, public = KINDS[i % len(KINDS)]
        race = Race(f"r{i}", "scotch", i + 1, "salt", Options(2, 600, True, public=public,
                                                              kind=kind), 0, "host", 0)
        for j in range(2):
            race.join(f"R{j}", f"t{j}", 0, pid=f"p{i}-{j}", rating=rng.randrange(900, 2300))
        race.start("host", 0)
        race.tick(1)
        held.append(race)
    return held


def visitors(n: int) -> list[str]:
    ids = [f"p:{i}" if i % 3 == 0 else f"k:{i:064x}" if i % 3 == 1 else f"c:{i}"
           for i in range(n)]
    return ids + ids[: n // 10]


def move_baseline(block: int) -> float:
    game = solrules.new_game("scotch", 7)
    move = game.legal_moves()[0]
    start = time.process_time()
    for _ in range(block):
        game.push(move)
        game.legal_by_text()
        game.pop()
    return (time.process_time() - start) / block


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--races", type=int, default=1000)
    ap.add_argument("--visitors", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--no-redis", action="store_true")
    args = ap.parse_args()
    rng = random.Random(29)
    held = races(args.races, rng)
    ids = visitors(args.visitors)
    live = Showcase(lambda: held, lambda: ids, lambda tid: False, clock=lambda: 0)
    looks, moves = [], []
    for _ in range(args.rounds):
        start = time.process_time()
        for _ in range(20):
            local = live.look()
        looks.append((time.process_time() - start) / 20)
        moves.append(move_baseline(2000))
    look, move = statistics.median(looks), statistics.median(moves)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.races} races held, "
          f"{len(ids)} connections ({len(local.visitors)} visitors)")
    print(f"a look: {look * 1e3:.2f} ms CPU (= {look / move:.0f} moves' rules work); "
          f"every 2 s: {look / 2 * 100:.2f} % of a core; "
          f"featured {local.featured['race'] if local.featured else None}")
    if args.no_redis:
        return
    with tempfile.TemporaryDirectory() as where:
        proc, port = redis_server(where)
        try:
            asyncio.run(exchanges(f"redis://127.0.0.1:{port}/0", local, args.rounds))
        finally:
            proc.kill()
            proc.wait()


async def exchanges(url: str, local: object, rounds: int) -> None:
    client = connect(url)
    others = [SharedFigures(client, f"other{i}") for i in range(3)]
    mine = SharedFigures(client, "me")
    for other in others:
        await other.exchange(local)  # type: ignore[arg-type]
    walls = []
    before = await client.info("cpu")
    for _ in range(rounds * 5):
        start = time.perf_counter()
        totals = await mine.exchange(local)  # type: ignore[arg-type]
        walls.append(time.perf_counter() - start)
    after = await client.info("cpu")
    used = (after["used_cpu_sys"] + after["used_cpu_user"]
            - before["used_cpu_sys"] - before["used_cpu_user"]) / len(walls)
    print(f"an exchange on Redis (4 processes): {statistics.median(walls) * 1e3:.1f} ms wall "
          f"(median), Redis CPU {used * 1e3:.2f} ms; players online {totals.players}")
    await client.aclose()


if __name__ == "__main__":
    main()
