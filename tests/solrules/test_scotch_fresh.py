"""Scotch for fresh deals (issue 32): the Kings' order proof with sets as bits agrees with the
byte-per-card proof it replaced, on the positions real searches meet."""

from __future__ import annotations

import random

import pytest
import solrules
from solrules import Budget, solve
from solrules.scotch_losses import kings_order_impossible
from solrules.solver_scotch import ScotchEngine

from . import scotch_order_reference
from .test_solver import scotch_endgame

#: Fresh deals (bench/fresh_deals_bench.py) whose searches meet many positions the proof fires
#: on (5169488967135735237: nearly every foundation move) and many it does not.
SEARCHED = [5169488967135735237, 6314504015931253850, 16332354230349107884]


def _positions_met(seed: int, nodes: int) -> list[tuple[list[list[int]], list[int], list[int]]]:
    met: list[tuple[list[list[int]], list[int], list[int]]] = []
    moves = ScotchEngine.moves

    def recording(engine: ScotchEngine) -> list[int]:
        met.append(([list(f) for f in engine.fans], list(engine.h), list(engine.ac)))
        return moves(engine)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScotchEngine, "moves", recording)
        solve(solrules.new_game("scotch", seed), Budget(nodes=nodes))
    return met


@pytest.mark.parametrize("seed", SEARCHED)
def test_kings_order_as_bits_agrees_on_searched_positions(seed: int) -> None:
    met = _positions_met(seed, 1_500)
    fired = 0
    for fans, h, ac in met:
        new = kings_order_impossible(fans, h, ac)
        assert new is scotch_order_reference.kings_order_impossible(fans, h, ac), (fans, h, ac)
        fired += new
    # Both outcomes are met, so that a difference either way would show.
    assert 0 < fired < len(met), (fired, len(met))


def test_kings_order_as_bits_agrees_on_end_positions() -> None:
    rng = random.Random(3232)
    fired = 0
    for _ in range(300):
        engine = ScotchEngine(scotch_endgame(rng, rng.randrange(4, 16)))
        new = kings_order_impossible(engine.fans, engine.h, engine.ac)
        assert new is scotch_order_reference.kings_order_impossible(
            engine.fans, engine.h, engine.ac), (engine.fans, engine.h, engine.ac)
        fired += new
    assert 30 < fired < 270, fired
