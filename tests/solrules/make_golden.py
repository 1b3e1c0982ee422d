"""(Re)write the golden files `seeds/golden/{game}.json` from the independent reference model.

Run from the repository root: ``.venv/bin/python -m tests.solrules.make_golden``.

Each file holds, for several seeds, every pile of the deal bottom to top (``piles``) with the
number of face-down cards at the bottom of each (``face_down``; the stock is always wholly face
down); a "perft" line, a fixed sequence of moves from one deal with the number of legal moves
before each move and after the last (``counts[i]`` is the count before ``line[i]``); and
``perft_depth``, the leaf counts at depths 1-4 from one deal. The model is written from
the rules alone (docs/rules.md), never from solrules, so the files are an independent check.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.solrules.model import GAMES, Model, MoveT, deal, is_ambiguous

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "seeds" / "golden"
SEEDS = (0, 1, 617, 11982, 31999, 32000, 32001, 123456789, 2**32 + 5, 2**64 - 1)
PERFT_SEED = {"scotch": 617, "quadruple-canfield": 4242, "yukon": 32001}
PERFT_LENGTH = {"scotch": 60, "quadruple-canfield": 250, "yukon": 80}


def move_text(move: MoveT) -> str:
    src, dst, count = move
    return f"{src}>{dst}" + (f"/{count}" if count > 1 else "")


def deal_record(game: str, seed: int) -> dict[str, Any]:
    model = deal(game, seed)
    return {
        "piles": model.board(reveal=True),
        "face_down": {
            pid: sum(card is None for card in cards) for pid, cards in model.board().items()
        },
    }


def perft_line(game: str) -> dict[str, Any]:
    """Counts of legal moves along a pseudo-random but fixed line from one deal."""
    seed = PERFT_SEED[game]
    model = deal(game, seed)
    rng = random.Random(f"perft-{game}")
    line: list[str] = []
    counts: list[int] = []
    for _ in range(PERFT_LENGTH[game]):
        moves = sorted(m for m in model.legal_moves() if not is_ambiguous(game, m, model))
        counts.append(len(moves))
        if not moves:
            break
        move = rng.choice(moves)
        line.append(move_text(move))
        model.apply(move)
    else:
        counts.append(
            sum(not is_ambiguous(game, m, model) for m in model.legal_moves())
        )
    return {"seed": seed, "line": line, "counts": counts}


def perft(model: Model, depth: int) -> int:
    """Number of move sequences of length `depth` (leaf nodes), as chess engines count them."""
    moves = [m for m in model.legal_moves() if not is_ambiguous(model.game, m, model)]
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        child = model.copy()
        child.apply(move)
        total += perft(child, depth - 1)
    return total


def golden(game: str) -> dict[str, Any]:
    return {
        "game": game,
        "generator": "python -m tests.solrules.make_golden",
        "deals": {str(seed): deal_record(game, seed) for seed in SEEDS},
        "perft": perft_line(game),
        "perft_depth": {"seed": PERFT_SEED[game],
                        "nodes": [perft(deal(game, PERFT_SEED[game]), d) for d in (1, 2, 3, 4)]},
    }


def main() -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for game in GAMES:
        path = GOLDEN_DIR / f"{game}.json"
        path.write_text(json.dumps(golden(game), indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
