"""Command line: ``python -m solrules deal GAME SEED [--json]`` and ``... play GAME [SEED]``."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Sequence
from typing import TextIO

from . import GAMES, IllegalMoveError, InvalidMoveError, new_game
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solrules", description="Patience rules: deal and play.")
    sub = parser.add_subparsers(dest="command", required=True)
    deal = sub.add_parser("deal", help="print the layout of a seeded deal")
    deal.add_argument("game", choices=GAMES)
    deal.add_argument("seed", type=_seed)
    deal.add_argument("--json", action="store_true", help="print the board object as JSON")
    deal.add_argument("--reveal", action="store_true", help="show face-down cards too")
    p = sub.add_parser("play", help="play a deal in the terminal")
    p.add_argument("game", choices=GAMES)
    p.add_argument("seed", type=_seed, nargs="?", help="deal number (random if left out)")
    args = parser.parse_args(argv)
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
