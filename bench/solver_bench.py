"""Solver benchmark: the share of deals decided within a time budget, and how fast.

Run from the repository root: ``.venv/bin/python bench/solver_bench.py`` (``--help`` for
options). For each game, ``--seeds`` deals (default 200) from a fixed random seed sequence
(``random.Random(BENCH_SEED)``, different from the catalogue's) are solved one at a time with
:func:`solrules.solve` and a budget of ``--budget-seconds`` per deal (``time.perf_counter``;
default 10 s, 30 s for Quadruple Canfield). ``--jobs 2`` runs two deals at once (the figures are
then per process; on a 2-core machine they stay comparable only if nothing else runs).

Reported per game: deals won, proved lost, unknown; the share decided (won or lost) against
the goal; median and 95th percentile of the seconds per deal (unknown deals count as their
budget); nodes per second over all deals (positions expanded / seconds).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import solrules

BENCH_SEED = 20261130
#: Goals: (share decided, seconds per deal) — those of issue 14 (issue 13's: 99 %, 95 %, 90 %).
GOALS = {"scotch": (0.995, 10.0), "yukon": (0.97, 10.0), "quadruple-canfield": (0.995, 30.0)}


def bench_seeds(count: int) -> list[int]:
    rng = random.Random(BENCH_SEED)
    return [rng.getrandbits(64) for _ in range(count)]


def solve_one(task: tuple[str, int, float, int | None]) -> tuple[int, str, int, float, int]:
    game, seed, seconds, nodes = task
    budget = (solrules.Budget(nodes=None, seconds=seconds) if nodes is None
              else solrules.Budget(nodes=nodes, seconds=None))
    result = solrules.solve(solrules.new_game(game, seed), budget, clock=time.perf_counter)
    assert result.seconds is not None
    return seed, result.verdict, result.nodes, result.seconds, len(result.line)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(solrules.GAMES),
                        help="comma-separated game names")
    parser.add_argument("--seeds", type=int, default=200, help="deals per game")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="seconds per deal (default: the goal's, 10 or 30)")
    parser.add_argument("--budget-nodes", type=int, default=None,
                        help="a node budget per deal instead of the time budget (for A/B runs "
                             "on a busy machine: the verdicts do not depend on the load)")
    parser.add_argument("--jobs", type=int, default=1, help="deals solved at once")
    parser.add_argument("--verbose", action="store_true", help="one line per deal")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    seeds = bench_seeds(args.seeds)
    print(f"python {sys.version.split()[0]}; {args.seeds} deals per game, seed sequence "
          f"random.Random({BENCH_SEED}); jobs {args.jobs}")
    header = (f"{'game':<20}{'budget':>8}{'won':>6}{'lost':>6}{'unknown':>8}{'decided':>9}"
              f"{'goal':>7}{'median s':>10}{'p95 s':>8}{'nodes/s':>10}")
    rows: list[str] = []
    ok = True
    for game in games:
        goal_share, goal_seconds = GOALS.get(game, (0.0, 10.0))
        seconds = args.budget_seconds or goal_seconds
        tasks = [(game, seed, seconds, args.budget_nodes) for seed in seeds]
        if args.jobs > 1:
            import multiprocessing

            method = "fork" if sys.platform != "win32" else "spawn"
            with multiprocessing.get_context(method).Pool(args.jobs) as pool:
                results = pool.map(solve_one, tasks)
        else:
            results = [solve_one(t) for t in tasks]
        counts = {"won": 0, "lost": 0, "unknown": 0}
        for seed, verdict, nodes, secs, length in results:
            counts[verdict] += 1
            if args.verbose:
                print(f"  {game} {seed} {verdict} {length} moves, {nodes} nodes, {secs:.2f} s")
        times = [r[3] for r in results]
        decided = (counts["won"] + counts["lost"]) / len(results)
        rate = sum(r[2] for r in results) / max(sum(times), 1e-9)
        met = decided >= goal_share
        ok = ok and met
        shown = f"{seconds:>7.0f}s" if args.budget_nodes is None else f"{args.budget_nodes:>7}n"
        rows.append(f"{game:<20}{shown}{counts['won']:>6}{counts['lost']:>6}"
                    f"{counts['unknown']:>8}{decided:>8.1%}{goal_share:>7.1%}"
                    f"{statistics.median(times):>10.2f}{percentile(times, 0.95):>8.2f}"
                    f"{rate:>10,.0f}  {'met' if met else 'NOT met'}")
        print(rows[-1], flush=True)
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        print(row)
    print()
    print("goals (share decided within the budget):", "met" if ok else "NOT all met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
