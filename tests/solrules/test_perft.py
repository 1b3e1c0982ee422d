"""Perft-style counts pinning move generation, from the golden files (written by the model)."""

from __future__ import annotations

import pytest
import solrules

from tests.solrules.helpers import golden, model_of, move_set
from tests.solrules.model import is_ambiguous

GAMES = ("scotch", "quadruple-canfield", "yukon")


def count(g: solrules.Game) -> int:
    """Legal moves, leaving out the few the rules reference leaves open (see model.is_ambiguous)."""
    moves = move_set(g)
    if g.name != "quadruple-canfield":
        return len(moves)
    model = model_of(g)
    return sum(not is_ambiguous(g.name, m, model) for m in moves)


@pytest.mark.parametrize("game", GAMES)
def test_counts_along_a_fixed_line(game: str) -> None:
    record = golden(game)["perft"]
    g = solrules.new_game(game, record["seed"])
    counts = []
    for text in record["line"]:
        counts.append(count(g))
        g.push_text(text)
    counts.append(count(g))
    assert counts == record["counts"]
    assert len(record["line"]) >= 50


def perft(g: solrules.Game, depth: int) -> int:
    moves = g.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        g.push(move)
        total += perft(g, depth - 1)
        g.pop()
    return total


@pytest.mark.parametrize("game", GAMES)
def test_perft_from_the_deal(game: str) -> None:
    record = golden(game)["perft_depth"]
    g = solrules.new_game(game, record["seed"])
    before = g.position()
    assert [perft(g, d) for d in range(1, len(record["nodes"]) + 1)] == record["nodes"]
    assert g.position() == before and g.move_stack == []


def test_the_lines_move_through_interesting_positions() -> None:
    """Guards the golden lines' value: runs, foundation moves and stock turns do occur."""
    lines = {game: golden(game)["perft"]["line"] for game in GAMES}
    assert any("/" in m for m in lines["yukon"]) and any(">f" in m for m in lines["yukon"])
    assert any("/" in m for m in lines["quadruple-canfield"])
    assert "s>w" in lines["quadruple-canfield"]
    assert any(m.startswith("f") for m in lines["scotch"])
