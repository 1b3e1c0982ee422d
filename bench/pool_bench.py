"""What a lost master key costs the pool, and what the daily deal's draw costs without a pool.

Run from the repository root: ``.venv/bin/python bench/pool_bench.py`` (``--help`` for options).

1. **Refill.** A pool whose store holds nothing it can open (a lost key: every sealed entry is
   dropped when taken) is refilled from empty: a :class:`~solrace.solver.pool.Pool` with the
   server's refill solver (``POOL_SECONDS``, ``POOL_NODES``; at ``--nice``, 19 in the server:
   give 0 on a busy machine to measure the solver rather than the machine) on a fresh SQLite
   store, until every game holds ``--size`` deals (default ``POOL_SIZE``, 50). Reported, from
   the pool's own stats: per game, deals solved and kept, seconds per kept deal; and the wall
   time until all were full (the refill takes the games in turn, one deal each).
2. **Seal.** Microseconds to seal and to open one entry of the pool.
3. **Daily draw.** ``--draws`` draws per game of the daily deal with no pool, as
   :class:`~solrace.service.daily.DailyDeals` draws it (:func:`~solrace.solver.pool.first_won`
   over fresh seeds, the server's solver with the par budget): deals solved per draw and
   seconds per draw (median, worst).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import solrules
from solrace.core.keys import KEY_BYTES, NONCE_BYTES, MasterKey
from solrace.settings import DAILY_DRAW_TRIES, POOL_NODES, POOL_SECONDS, POOL_SIZE
from solrace.solver.jobs import Par, Solver
from solrace.solver.pool import Pool, first_won, open_deal, seal_deal
from solrace.store.sqlite_store import SQLiteStore


async def refill(size: int, nice: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "race.db")
        solver = Solver(hint_seconds=0, par_seconds=POOL_SECONDS, par_nodes=POOL_NODES,
                        nice=nice)
        pool = Pool(store, solrules.GAMES, solver, size=size, reserve=0)
        t0 = time.monotonic()
        full: dict[str, float] = {}
        pool.start()
        try:
            while len(full) < len(solrules.GAMES):
                for game in solrules.GAMES:
                    if game not in full and await store.pool_size(game) >= size:
                        full[game] = time.monotonic() - t0
                await asyncio.sleep(0.2)
        finally:
            await pool.stop()
            store.close()
        print(f"refill of {size} deals per game, solver at nice {nice}:")
        for game in solrules.GAMES:
            stats = pool.stats(game)
            print(f"  {game:20} tried {stats['tried']:4}  kept {stats['kept']:4}  "
                  f"{stats['seconds_per_kept']} s per kept deal  full after {full[game]:.1f} s")
        print(f"  all full after {max(full.values()):.1f} s")


def seal_cost(n: int = 20000) -> None:
    key = MasterKey(secrets.token_bytes(KEY_BYTES)).derive("pool")
    nonce = secrets.token_bytes(NONCE_BYTES)
    t0 = time.perf_counter()
    for i in range(n):
        entry = seal_deal(key, "yukon", i, 90, nonce)
    t1 = time.perf_counter()
    for _ in range(n):
        open_deal(key, "yukon", entry)
    t2 = time.perf_counter()
    print(f"seal: {(t1 - t0) / n * 1e6:.1f} µs per entry, open: {(t2 - t1) / n * 1e6:.1f} µs "
          f"({len(entry)} characters)")


async def daily_draws(draws: int, nice: int) -> None:
    solver = Solver(hint_seconds=0, nice=nice)
    print(f"daily draw without a pool ({draws} per game, the par budget, nice {nice}):")
    try:
        for game in solrules.GAMES:
            tries: list[int] = []
            seconds: list[float] = []
            for _ in range(draws):
                count = 0

                async def solve(game: str, seed: int) -> Par:
                    nonlocal count
                    count += 1
                    return await solver.solve(game, seed)

                t0 = time.monotonic()
                found = await first_won(game, solve, (secrets.randbits(64)
                                                      for _ in range(DAILY_DRAW_TRIES)))
                seconds.append(time.monotonic() - t0)
                tries.append(count if found is not None else -count)
            failed = sum(t < 0 for t in tries)
            print(f"  {game:20} deals per draw: mean {statistics.mean(map(abs, tries)):.2f}, "
                  f"most {max(map(abs, tries))}; seconds per draw: median "
                  f"{statistics.median(seconds):.2f}, worst {max(seconds):.2f}; "
                  f"draws with none won: {failed}")
    finally:
        await solver.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=POOL_SIZE, help="deals per game to refill")
    p.add_argument("--nice", type=int, default=19, help="the refill solver's niceness")
    p.add_argument("--draws", type=int, default=30, help="daily draws per game")
    p.add_argument("--skip-refill", action="store_true")
    args = p.parse_args()
    seal_cost()
    if not args.skip_refill:
        asyncio.run(refill(args.size, args.nice))
    asyncio.run(daily_draws(args.draws, args.nice))
    return 0


if __name__ == "__main__":
    sys.exit(main())
