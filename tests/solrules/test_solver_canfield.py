"""The Quadruple Canfield engine of the solver: snapshots, the best-first searcher of issue 20
(which waits for the prover's first dive), agreement with the plain search of ``oracle.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import solrules
from solrules import Budget, solve
from solrules.solver import _engine, _search
from solrules.solver_canfield import CanfieldEngine

from .helpers import agree_with_plain_search
from .test_solver import canfield_endgame

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "seeds" / "catalogue" / "quadruple-canfield.jsonl"


def test_snapshot_restores_the_position() -> None:
    game = solrules.new_game("quadruple-canfield", 4242)
    engine = _engine(game)
    assert isinstance(engine, CanfieldEngine)
    rng = random.Random(5)
    for _ in range(30):
        snap = engine.snapshot()
        key, moves, score = engine.key(), engine.moves(), engine.score()
        for _ in range(rng.randrange(1, 12)):
            options = engine.moves()
            if not options:
                break
            engine.apply(rng.choice(options))
        engine.restore(snap)
        assert (engine.key(), engine.moves(), engine.score()) == (key, moves, score)
        options = engine.moves()
        engine.apply(options[rng.randrange(len(options))])


def test_score_counts_cards_home() -> None:
    game = solrules.new_game("quadruple-canfield", 99)
    engine = _engine(game)
    before = engine.score()
    home = [m for m in engine.moves() if (m & 0xFF) < engine.nf]
    assert home
    engine.apply(home[0])
    assert engine.score() > before


def test_easy_deals_cost_what_the_prover_alone_costs() -> None:
    """Best-first waits for the prover's first 2,048 nodes: a deal the prover wins within them
    costs exactly the same nodes as before issue 20 (the benchmark's median: about 490)."""
    checked = 0
    for seed in range(1, 5):
        alone = _search(_engine(solrules.new_game("quadruple-canfield", seed)),
                        Budget(nodes=2_000), None, None, best_first=False)
        if alone.verdict != "won":
            continue
        both = _search(_engine(solrules.new_game("quadruple-canfield", seed)),
                       Budget(nodes=2_000), None, None)
        assert (both.verdict, both.nodes, both.line) == ("won", alone.nodes, alone.line), seed
        checked += 1
    assert checked >= 3


def test_catalogue_sample_still_won() -> None:
    with open(CATALOGUE, encoding="utf-8") as f:
        won = [json.loads(line) for line in f if '"won"' in line]
    for e in won[:3]:
        # _search: solve would also shorten the 480-move line, which takes longer here.
        result = _search(_engine(solrules.new_game("quadruple-canfield", int(e["seed"]))),
                         Budget(nodes=3_000), None, None)
        assert result.verdict == "won", e["seed"]


def _agree(seed: int, count: int, budget: int) -> dict[str, int]:
    rng = random.Random(seed)
    return agree_with_plain_search(
        [canfield_endgame(rng, rng.randrange(3, 8)) for _ in range(count)], budget)


def test_end_positions_agree_with_the_plain_search() -> None:
    tally = _agree(77, 10, 800)
    assert tally["won"] >= 5, tally


@pytest.mark.slow
def test_end_positions_agree_with_the_plain_search_many() -> None:
    tally = _agree(7777, 80, 3_000)
    assert tally["won"] >= 40, tally


@pytest.mark.slow
def test_benchmark_deals_the_prover_alone_left_unknown() -> None:
    """Two benchmark deals the prover alone does not win within 40,000 nodes (issue 20: a deep
    line that loses its way never comes back); best-first wins them."""
    for seed in (7677748465318527743, 11738741112135258870):
        result = solve(solrules.new_game("quadruple-canfield", seed), Budget(nodes=40_000))
        assert result.verdict == "won", seed
        game = solrules.new_game("quadruple-canfield", seed)
        for text in result.line:
            game.push_text(text)
        assert game.is_won()
