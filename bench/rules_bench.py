"""Rules-engine benchmark: solrules `legal_moves()` and `push`+`pop` against python-chess.

Run from the repository root: ``.venv/bin/python bench/rules_bench.py`` (``--help`` for options).

For each game, positions come from random legal play from several seeds (a fixed RNG, so runs are
comparable). Each figure is the best of several repeats (time.perf_counter), the usual way to
filter out scheduler noise. The baseline, in the same process, is python-chess generating every
legal move of the "Kiwipete" middlegame position (`list(board.legal_moves)`). A ratio above 1
means solrules is faster per call than python-chess; the goal is >= 1 for every game.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

import chess
import solrules

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def sample_positions(game: str, count: int, rng: random.Random) -> list[solrules.Game]:
    """`count` games, each after a random number of random legal moves from a random seed."""
    out: list[solrules.Game] = []
    while len(out) < count:
        g = solrules.new_game(game, rng.randrange(2**64))
        for _ in range(rng.randrange(0, 120)):
            moves = g.legal_moves()
            if not moves:
                break
            g.push(rng.choice(moves))
        if g.legal_moves():  # push+pop needs a move to play
            out.append(solrules.parse_position(g.position()))
    return out


def best_rate(work: Callable[[], int], repeat: int) -> float:
    """Operations per second: best of `repeat` runs of `work` (which returns its op count)."""
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        ops = work()
        elapsed = time.perf_counter() - start
        best = max(best, ops / elapsed)
    return best


def bench_game(game: str, positions: int, loops: int, repeat: int,
               rng: random.Random) -> tuple[float, float, float]:
    """(legal_moves calls/s, push+pop pairs/s, mean legal moves per position)."""
    games = sample_positions(game, positions, rng)
    moves = [rng.choice(g.legal_moves()) for g in games]

    def legal() -> int:
        for _ in range(loops):
            for g in games:
                # Game remembers the list of its current position (and of the one before the
                # last push): forget it, so that every call here generates the list.
                g._legal = None
                g.legal_moves()
        return loops * len(games)

    def push_pop() -> int:
        for _ in range(loops):
            for g, m in zip(games, moves, strict=True):
                g.push(m)
                g.pop()
        return loops * len(games)

    mean_moves = sum(len(g.legal_moves()) for g in games) / len(games)
    return best_rate(legal, repeat), best_rate(push_pop, repeat), mean_moves


def bench_chess(loops: int, repeat: int) -> tuple[float, int]:
    board = chess.Board(KIWIPETE)
    n = len(list(board.legal_moves))

    def legal() -> int:
        for _ in range(loops):
            list(board.legal_moves)
        return loops

    return best_rate(legal, repeat), n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1000, help="positions per game")
    parser.add_argument("--loops", type=int, default=1,
                        help="passes over them per repeat (1: no call sees a position twice "
                             "within a repeat, so a per-position cache could not flatter it)")
    parser.add_argument("--repeat", type=int, default=5, help="repeats; the best is kept")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the position sampler")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    chess_rate, chess_moves = bench_chess(args.loops * args.positions, args.repeat)
    chess_us = 1e6 / chess_rate
    print(f"python {sys.version.split()[0]}, chess {chess.__version__}; best of {args.repeat}, "
          f"{args.positions} positions x {args.loops} loops per game")
    print(f"baseline: python-chess legal_moves, Kiwipete ({chess_moves} moves): "
          f"{chess_rate:,.0f} calls/s, {chess_us:.1f} µs/call")
    print()
    header = (f"{'game':<20}{'moves/pos':>10}{'legal_moves/s':>15}{'µs/call':>10}"
              f"{'push+pop/s':>13}{'vs chess':>10}")
    print(header)
    print("-" * len(header))
    ok = True
    for game in solrules.GAMES:
        legal_rate, pair_rate, mean_moves = bench_game(game, args.positions, args.loops,
                                                       args.repeat, rng)
        ratio = legal_rate / chess_rate
        ok = ok and ratio >= 1
        print(f"{game:<20}{mean_moves:>10.1f}{legal_rate:>15,.0f}{1e6 / legal_rate:>10.1f}"
              f"{pair_rate:>13,.0f}{ratio:>9.2f}x")
    print()
    print("goal (each game's legal_moves at least as fast per call as python-chess):",
          "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
