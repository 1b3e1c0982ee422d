"""Command line: ``python -m solrules deal GAME SEED [--json]``, ``... play GAME [SEED]`` and
``... solve GAME SEED [--budget-nodes N] [--budget-seconds S] [--json]``."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from . import GAMES, TITLES, IllegalMoveError, InvalidMoveError, new_game
from .solver import Budget, SearchProgress, SolveResult, solve
from .text import render

HELP = """commands:
  MOVE     a move text: t3>f1 (one card), t2>t5/3 (top three cards), s>w (deal), w>s (turn over)
  legal    list the legal moves
  undo     take back the last move
  board    show the board again
  help     this text
  quit     leave"""


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, not {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError("a seed is between 0 and 2**64 - 1")
    return value


def play(game_name: str, seed: int, stdin: TextIO, stdout: TextIO) -> int:
    """Play in a terminal: reads commands from ``stdin`` until ``quit``, end of input or a win."""
    game = new_game(game_name, seed)
    out = stdout.write
    out(render(game) + "\n" + "type a move such as t3>f1, or 'help'\n")
    while True:
        out("move> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            out("\n")
            return 0
        cmd = line.strip()
        if not cmd:
            continue
        if cmd in ("quit", "exit", "q"):
            return 0
        if cmd in ("help", "?"):
            out(HELP + "\n")
        elif cmd == "legal":
            moves = [m.text() for m in game.legal_moves()]
            out((" ".join(moves) if moves else "no legal moves: undo, or quit") + "\n")
        elif cmd == "board":
            out(render(game) + "\n")
        elif cmd == "undo":
            if not game.move_stack:
                out("nothing to undo\n")
            else:
                out(f"took back {game.pop().text()}\n" + render(game) + "\n")
        else:
            try:
                game.push_text(cmd)
            except (InvalidMoveError, IllegalMoveError) as exc:
                out(f"{exc}\n")
                continue
            out(render(game) + "\n")
            if game.is_won():
                out(f"You won in {len(game.move_stack)} moves!\n")
                return 0
            if not game.legal_moves():
                out("no legal moves left: undo, or quit\n")


class ProgressLine:
    """Writes ``nodes … depth … elapsed`` to ``out`` at most every ``every`` seconds, on one
    line rewritten with a carriage return; :meth:`clear` blanks it when the search is over."""

    def __init__(self, out: TextIO, every: float) -> None:
        self.out = out
        self.every = every
        self.last = 0.0
        self.width = 0

    def __call__(self, p: SearchProgress) -> None:
        seconds = p.seconds or 0.0
        if seconds - self.last < self.every:
            return
        self.last = seconds
        text = (f"searching: {p.nodes:,} nodes, depth {p.depth} (max {p.max_depth}), "
                f"{seconds:.1f} s")
        self.width = max(self.width, len(text))
        self.out.write("\r" + text.ljust(self.width))
        self.out.flush()

    def clear(self) -> None:
        if self.width:
            self.out.write("\r" + " " * self.width + "\r")
            self.out.flush()


def solve_command(game_name: str, seed: int, budget: Budget, as_json: bool, stdout: TextIO,
                  stderr: TextIO, progress_every: float = 1.0) -> int:
    """Solve a deal and print the verdict, the winning line and the search statistics."""
    game = new_game(game_name, seed)
    line = ProgressLine(stderr, progress_every)
    try:
        result = solve(game, budget, clock=time.perf_counter, progress=line)
    finally:
        line.clear()
    if as_json:
        stdout.write(json.dumps({"game": game_name, "seed": str(seed), **result.as_dict()})
                     + "\n")
        return 0
    stdout.write(describe(game_name, seed, result) + "\n")
    return 0


def describe(game_name: str, seed: int, result: SolveResult) -> str:
    """The text report of ``solve``: verdict, line, statistics."""
    title = TITLES[game_name]
    thoughtful = "" if game_name == "scotch" else " (thoughtful: every card known)"
    if result.verdict == "won":
        head = f"{title} {seed}: won in {len(result.line)} moves{thoughtful}"
    elif result.verdict == "lost":
        head = f"{title} {seed}: lost — no line of moves wins{thoughtful}"
    else:
        head = f"{title} {seed}: unknown — the budget ran out before a verdict"
    lines = [head]
    if result.line:
        lines.append(" ".join(result.line))
    seconds = "" if result.seconds is None else f", {result.seconds:.2f} s"
    lines.append(f"{result.nodes:,} positions searched, longest line {result.max_depth}"
                 f"{seconds}")
    return "\n".join(lines)


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError("must be more than 0")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solrules",
                                     description="Patience rules: deal, play and solve.")
    sub = parser.add_subparsers(dest="command", required=True)
    deal = sub.add_parser("deal", help="print the layout of a seeded deal")
    deal.add_argument("game", choices=GAMES)
    deal.add_argument("seed", type=_seed)
    deal.add_argument("--json", action="store_true", help="print the board object as JSON")
    deal.add_argument("--reveal", action="store_true", help="show face-down cards too")
    p = sub.add_parser("play", help="play a deal in the terminal")
    p.add_argument("game", choices=GAMES)
    p.add_argument("seed", type=_seed, nargs="?", help="deal number (random if left out)")
    sv = sub.add_parser("solve", help="search for a winning line (every card known)")
    sv.add_argument("game", choices=GAMES)
    sv.add_argument("seed", type=_seed)
    sv.add_argument("--budget-nodes", type=_positive(int), default=None,
                    help="positions to search at most (default: no limit)")
    sv.add_argument("--budget-seconds", type=_positive(float), default=None,
                    help="seconds to search at most (default: 60 when no node budget is given)")
    sv.add_argument("--json", action="store_true", help="print the result as one JSON object")
    sv.add_argument("--progress-every", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "solve":
        seconds = args.budget_seconds
        if seconds is None and args.budget_nodes is None:
            seconds = 60.0
        budget = Budget(nodes=args.budget_nodes, seconds=seconds)
        try:
            return solve_command(args.game, args.seed, budget, args.json, sys.stdout,
                                 sys.stderr, args.progress_every)
        except KeyboardInterrupt:
            print()
            return 130
    if args.command == "deal":
        game = new_game(args.game, args.seed)
        if args.json:
            print(json.dumps(game.board(reveal=args.reveal)))
        else:
            print(render(game, reveal=args.reveal))
        return 0
    seed = args.seed if args.seed is not None else secrets.randbelow(2**64)
    try:
        return play(args.game, seed, sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        print()
        return 130


if __name__ == "__main__":
    sys.exit(main())
