"""Fresh deals (issue 32, item 1): the share of random deals the solver decides in "10 s".

Run from the repository root: ``.venv/bin/python bench/fresh_deals_bench.py`` (``--help`` for
options). Each game gets ``--deals`` deals (default 200) drawn from ``random.Random(SEED)``
(``getrandbits(64)`` again and again, the same seeds for every game; ``--sample-seed`` for
another sample), a sequence no catalogue, pool or other benchmark uses.

The budget is **nodes**, not seconds, so that the verdicts do not depend on the other work the
shared machine runs: ``--calibrate`` measures each game's nodes per CPU second
(``time.process_time``, one process, the first ``--calibrate-deals`` deals of the sample at
``--calibrate-nodes`` each, counting the deals that spend them all) and prints the node budget
worth ``--seconds`` (default 10) of one core; pass those as ``--budget-nodes game=N,...`` (the
defaults are the figures published in docs/winnability.md, "Fresh deals (issue 32)"). The wall
clock and CPU seconds of every deal are reported too; ``--budget-seconds S`` stops each deal
on the wall clock instead. A search is deterministic: ``--report-at game=N,...`` reports, from
the same run, the verdicts at smaller node budgets.

Every deal is solved in a process of its own (``--jobs`` at once), so its peak resident memory
(``ru_maxrss``, less the process's size before the search) is the search's. A won verdict is
checked by replaying the line through ``solrules`` (``push_text`` refuses an illegal move) to a
won position; a line that does not replay fails the run. Lost verdicts are proofs; the tests
(``tests/solrules/test_oracle.py``, ``test_solver*.py``) hold them to the plain search.
``--out FILE`` writes one JSON line per deal (seed, verdict, nodes, seconds, memory).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import statistics
import sys
import time
from typing import TypedDict

import solrules

SEED = 20261204
#: Goals of issue 32: the share of deals decided (won with a line that replays, or proved lost).
GOALS = {"scotch": 0.99, "yukon": 0.99, "quadruple-canfield": 0.995}
#: Node budgets worth 10 s of one core's CPU time for the solver as it is (``--calibrate``,
#: 2026-12-04, load average 1.6–3.8; docs/winnability.md): Scotch's nodes got dearer (two more
#: best-first searchers), Yukon's cheaper (traps, fewer waiting events).
BUDGET_NODES = {"scotch": 69_000, "yukon": 158_000, "quadruple-canfield": 148_000}


class DealResult(TypedDict):
    game: str
    seed: int
    verdict: str
    moves: int
    nodes: int
    wall: float
    cpu: float
    memory_mb: float


def sample(sample_seed: int, count: int) -> list[int]:
    rng = random.Random(sample_seed)
    return [rng.getrandbits(64) for _ in range(count)]


def _rss_kb() -> int:
    # Linux reports ru_maxrss in KiB; the current size comes from /proc (statm: pages).
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def solve_one(task: tuple[str, int, int, float | None]) -> DealResult:
    game, seed, nodes, seconds = task
    start = solrules.new_game(game, seed)
    before = _rss_kb()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    budget = (solrules.Budget(nodes=nodes, seconds=None) if seconds is None
              else solrules.Budget(nodes=None, seconds=seconds))
    result = solrules.solve(start, budget, clock=time.perf_counter)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if result.verdict == "won":
        replay = solrules.new_game(game, seed)
        for text in result.line:
            replay.push_text(text)
        if not replay.is_won():
            raise AssertionError(f"{game} {seed}: the winning line does not win")
    return DealResult(game=game, seed=seed, verdict=result.verdict, moves=len(result.line),
                      nodes=result.nodes, wall=wall, cpu=cpu,
                      memory_mb=max(0, peak - before) / 1024)


def run(tasks: list[tuple[str, int, int, float | None]], jobs: int) -> list[DealResult]:
    # One process per deal (maxtasksperchild=1): ru_maxrss is then this deal's peak.
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
        return pool.map(solve_one, tasks, chunksize=1)


def calibrate(games: list[str], seeds: list[int], nodes: int, seconds: float) -> None:
    print(f"calibration: nodes per CPU second, {len(seeds)} deals at {nodes:,} nodes each, "
          f"one process")
    for game in games:
        results = run([(game, s, nodes, None) for s in seeds], 1)
        # The budget matters for the deals that spend it: their nodes cost what counts.
        spent = [r for r in results if r["nodes"] >= nodes] or results
        total_nodes = sum(r["nodes"] for r in spent)
        cpu = sum(r["cpu"] for r in spent)
        wall = sum(r["wall"] for r in spent)
        rate = total_nodes / max(cpu, 1e-9)
        print(f"  {game:<20}{len(spent):>3} deals spent it: {total_nodes:>10,} nodes "
              f"{cpu:>7.1f} s CPU {wall:>7.1f} s wall {rate:>8,.0f} nodes/CPU s -> "
              f"{round(rate * seconds, -3):>9,.0f} nodes for {seconds:g} s", flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def report(game: str, budget: int, results: list[DealResult], also: list[int]) -> bool:
    """Print one game's figures; ``also``: smaller node budgets to report from the same run
    (a search is deterministic, so a deal decided within n nodes is decided at any budget ≥ n)."""
    counts = {"won": 0, "lost": 0, "unknown": 0}
    for r in results:
        counts[r["verdict"]] += 1
    decided = (counts["won"] + counts["lost"]) / len(results)
    goal = GOALS.get(game, 0.0)
    nodes = [float(r["nodes"]) for r in results]
    wall = [r["wall"] for r in results]
    memory = [r["memory_mb"] for r in results]
    rate = sum(nodes) / max(sum(r["cpu"] for r in results), 1e-9)
    met = decided >= goal
    print(f"{game:<20}{budget:>9,}{counts['won']:>6}{counts['lost']:>6}{counts['unknown']:>8}"
          f"{decided:>8.1%}{goal:>7.1%}  {'met' if met else 'NOT met'}")
    print(f"  nodes median {statistics.median(nodes):,.0f}, p95 {percentile(nodes, 0.95):,.0f}, "
          f"max {max(nodes):,.0f}; wall s median {statistics.median(wall):.2f}, "
          f"p95 {percentile(wall, 0.95):.2f}, max {max(wall):.2f}; {rate:,.0f} nodes/CPU s")
    for n in sorted(also):
        won = sum(r["verdict"] == "won" and r["nodes"] <= n for r in results)
        lost = sum(r["verdict"] == "lost" and r["nodes"] <= n for r in results)
        print(f"  within {n:,} nodes (the same search stopped there): won {won}, lost {lost}, "
              f"unknown {len(results) - won - lost}, decided {(won + lost) / len(results):.1%}")
    print(f"  memory MB (peak RSS growth) median {statistics.median(memory):.1f}, "
          f"p95 {percentile(memory, 0.95):.1f}, max {max(memory):.1f}")
    slow = sorted((r for r in results if r["verdict"] == "unknown" or r["nodes"] > budget // 10),
                  key=lambda r: -r["nodes"])
    for r in slow:
        print(f"    {r['seed']} {r['verdict']} {r['nodes']:,} nodes {r['wall']:.1f} s wall "
              f"{r['memory_mb']:.0f} MB")
    return met


def parse_budgets(text: str | None) -> dict[str, int]:
    budgets = dict(BUDGET_NODES)
    for item in (text or "").split(","):
        if item.strip():
            game, _, n = item.partition("=")
            budgets[game.strip()] = int(n)
    return budgets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", default=",".join(solrules.GAMES))
    parser.add_argument("--deals", type=int, default=200, help="deals per game")
    parser.add_argument("--sample-seed", type=int, default=SEED)
    parser.add_argument("--budget-nodes", default=None,
                        help="game=nodes,... (default: the calibrated budgets)")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="a wall-clock budget per deal instead of the node budgets")
    parser.add_argument("--jobs", type=int, default=1, help="deals solved at once")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--calibrate-deals", type=int, default=40)
    parser.add_argument("--calibrate-nodes", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--report-at", default=None,
                        help="game=nodes,... smaller budgets to report from the same run")
    parser.add_argument("--out", default=None, help="write one JSON line per deal here")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    seeds = sample(args.sample_seed, args.deals)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"python {sys.version.split()[0]}; sample random.Random({args.sample_seed}); "
          f"load average {' '.join(load)}")
    if args.calibrate:
        calibrate(games, seeds[:args.calibrate_deals], args.calibrate_nodes, args.seconds)
        return 0
    budgets = parse_budgets(args.budget_nodes)
    print(f"{args.deals} deals per game, jobs {args.jobs}, budget "
          + (f"{args.budget_seconds:g} s of wall clock per deal (the nodes column: ignored)"
             if args.budget_seconds is not None else "in nodes"))
    print(f"{'game':<20}{'nodes':>9}{'won':>6}{'lost':>6}{'unknown':>8}{'decided':>8}{'goal':>7}")
    ok = True
    all_results: list[DealResult] = []
    for game in games:
        results = run([(game, s, budgets[game], args.budget_seconds) for s in seeds], args.jobs)
        all_results += results
        also = [int(n) for g, _, n in (i.partition("=") for i in (args.report_at or "").split(","))
                if g.strip() == game and int(n) < budgets[game]]
        ok = report(game, budgets[game], results, also) and ok
    if args.out:
        with open(args.out, "w") as out:
            out.writelines(json.dumps(r) + "\n" for r in all_results)
    with open("/proc/loadavg") as f:
        print("load average at the end:", " ".join(f.read().split()[:3]))
    print("goals:", "met" if ok else "NOT all met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
