"""Benchmark: what a post-race analysis costs in solver time, per game.

    .venv/bin/python bench/analysis_bench.py [--racers 4]

Plays lines a racer might play (cards home first most of the time, otherwise any legal move,
an undo now and then) of 80 Scotch, 120 Yukon and 200 Quadruple Canfield actions, and runs each
through :class:`solrace.solver.analysis.Review` with the server's budgets, solving here (as the
solver's worker does, one position at a time). Prints per line: the positions solved, the
solver's seconds, the first loss found, how many losses got their better move (``best``) and
the solves spent on that alone; docs/protocol.md ("Post-race analysis") quotes them. As on the
server, the deal's verdict comes in known (par: solved here first, not counted) without its
line, the worst case for the better move at a loss from the deal.
It is a benchmark, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from solrace.settings import (
    ANALYSIS_NODES,
    ANALYSIS_POSITION_SECONDS,
    ANALYSIS_SECONDS,
    ANALYSIS_SOLVES,
)
from solrace.solver.analysis import Review
from solrace.solver.worker import solve_position
from solrace.tools.lines import racer_line

LINES = (("scotch", 80), ("yukon", 120), ("quadruple-canfield", 200))




def analyse(game: str, seed: int, actions: list[str]) -> tuple[Review, float]:
    par = solve_position({"g": game, "s": seed, "a": [], "n": ANALYSIS_NODES,
                          "t": ANALYSIS_POSITION_SECONDS})["verdict"]
    review = Review(actions, ANALYSIS_SOLVES, par)
    spent = 0.0
    gen = review.run()
    try:
        i = next(gen)
        while True:
            left = ANALYSIS_SECONDS - spent
            if left <= 0:
                review.stop()
                i = gen.send(("unknown", ()))
                continue
            answer = solve_position({"g": game, "s": seed, "a": actions[:i],
                                     "n": ANALYSIS_NODES,
                                     "t": min(ANALYSIS_POSITION_SECONDS, left)})
            spent += answer["seconds"]
            i = gen.send((answer["verdict"], answer["line"]))
    except StopIteration:
        pass
    return review, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--racers", type=int, default=4, help="lines per game")
    args = parser.parse_args()
    for game, length in LINES:
        for seed in range(100, 100 + args.racers):
            actions = racer_line(game, seed, length, random.Random(seed))
            start = time.perf_counter()
            review, spent = analyse(game, seed, actions)
            losses = review.losses()
            first = (f"lost at {losses[0]['at']}{'' if losses[0]['exact'] else ' (bounds)'}"
                     if losses else "no loss")
            if losses:
                first += (f", best for {sum(1 for x in losses if x['best'])}/{len(losses)}"
                          f" (+{review.coached} solves)")
            print(f"{game:18} seed {seed}: {len(actions):3} actions, {review.solved:2} solved, "
                  f"{spent:5.2f} s of solver time ({time.perf_counter() - start:5.2f} s), "
                  f"deal {review.verdict_at(0)}, {first}"
                  f"{', incomplete' if review.incomplete else ''}", flush=True)


if __name__ == "__main__":
    main()
