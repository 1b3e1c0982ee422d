"""Lines of play made up for benchmarks and tests: random play that takes a card home when it
can (most of the time) and now and then takes its last move back, as people do."""

from __future__ import annotations

import random

import solrules


def racer_line(game: str, seed: int, length: int, rng: random.Random) -> list[str]:
    """Up to ``length`` actions (moves in the protocol's notation, or ``"undo"``) from the deal
    of ``game`` and ``seed``, drawn with ``rng``; shorter when no move is left."""
    g = solrules.new_game(game, seed)
    line: list[str] = []
    depth = 0
    while len(line) < length:
        legal = [m.text() for m in g.legal_moves()]
        if not legal:
            break
        if depth and rng.random() < 0.08:
            g.pop()
            line.append("undo")
            depth -= 1
            continue
        home = [m for m in legal if ">f" in m]
        move = home[0] if home and rng.random() < 0.8 else rng.choice(legal)
        g.push_text(move)
        line.append(move)
        depth += 1
    return line
