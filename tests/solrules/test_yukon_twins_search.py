"""Twins' places in the search (issue 32): :func:`solrules.yukon_losses.yukon_twins_blocked`,
until now run at the root only, also runs after a card turns up or goes home, within a share
of the search's effort (``solver_yukon.TWINS_SHARE``, ``TWINS_PAID``). The rule itself is held
to the plain search in ``test_solver_yukon.py``; here, the positions the search proves lost
with it are too, and the two fresh deals it decides are checked.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import solrules
from solrules import Budget, solve, solver_yukon
from solrules.solver_yukon import YukonEngine

from .oracle import model_of, plain_search
from .test_commuting_losses import _played, _text
from .test_solver import yukon_endgame


def test_the_check_follows_cards_turned_up_and_home() -> None:
    """A move that turns a card up or puts one home asks for the check in the position it
    reaches; any other move, undo and restore do not."""
    asked = plain = 0
    for g in _played(51, 80):
        engine = YukonEngine(g)
        moves = engine.moves()
        snap = engine.snapshot()
        for move in moves:
            down, home = sum(engine.down), engine.home
            record = engine.apply(move)
            fresh = sum(engine.down) < down or engine.home > home
            assert engine.twins_pending == fresh
            asked += fresh
            plain += not fresh
            engine.undo(record)
            assert not engine.twins_pending
        engine.restore(snap)
        assert not engine.twins_pending
    assert asked > 20 and plain > 50


def _proved(g: solrules.Game, nodes: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The positions below the root that a search of ``g`` proves lost by twins' places."""
    out: list[str] = []
    pair_of = solver_yukon.yukon_twins_pair
    root = [True]

    def recorded(cols: list[list[int]], down: list[int], found: list[int],
                 first: list[int] | None = None,
                 order: list[int] | None = None) -> tuple[int, int]:
        pair, runs = pair_of(cols, down, found, first, order)
        if pair >= 0 and not root[0]:
            engine = YukonEngine(solrules.new_game("yukon", 1))
            engine.cols, engine.down, engine.found = cols, down, found
            out.append(_text(engine))
        root[0] = False
        return pair, runs

    with monkeypatch.context() as m:
        m.setattr(solver_yukon, "yukon_twins_pair", recorded)
        m.setattr(solver_yukon, "TWINS_SHARE", 100.0)  # after every card turned up or home
        solve(g, Budget(nodes=nodes))
    return out


def test_positions_proved_by_twins_in_searches_are_never_won(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches of random end positions: every position below the root they prove lost by
    twins' places is one the plain search (every legal move, no deadlock rule) does not win,
    and proves lost whenever it decides."""
    rng = random.Random(52)
    proved: list[str] = []
    for _ in range(300):
        g = yukon_endgame(rng, rng.randrange(16, 30), columns=(4, 5, 6, 7), fill_all=True)
        proved += _proved(g, 1_000, monkeypatch)[:5]
        if len(proved) >= 40:
            break
    assert len(proved) >= 20
    decided = 0
    for text in proved:
        outcome = plain_search(model_of(text), 3_000)
        assert outcome.verdict != "won", text
        decided += outcome.verdict == "lost"
    assert decided >= len(proved) // 2


def test_fresh_deals_decided_by_twins() -> None:
    """Issue 32's sample: 5732260998071838222 (won in 855,798 nodes before) is won in 705, by
    a line that replays; 3300840918404133564 (proved lost in 453,698 nodes before) in
    40,364."""
    g = solrules.new_game("yukon", 5732260998071838222)
    won = solve(g, Budget(nodes=1_000))
    assert won.verdict == "won"
    for text in won.line:
        g.push_text(text)
    assert g.is_won()
    lost = solve(solrules.new_game("yukon", 3300840918404133564), Budget(nodes=41_000))
    assert lost.verdict == "lost"


def test_the_checks_stay_within_their_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where twins' places never pay (a deal won in 104,404 nodes, whose search they never
    cut), their runs of the waiting events stay within a tenth of the positions expanded,
    one check (at most 48 runs) over."""
    engines: list[Any] = []
    init = YukonEngine.__init__

    def kept(self: YukonEngine, game: solrules.Game) -> None:
        init(self, game)
        engines.append(self)

    monkeypatch.setattr(YukonEngine, "__init__", kept)
    solve(solrules.new_game("yukon", 6181069525400604270), Budget(nodes=20_000))
    engine = engines[0]
    assert engine.twins_runs > 500
    assert engine.twins_runs <= (solver_yukon.TWINS_SHARE * engine.expanded
                                 + solver_yukon.TWINS_PAID * engine.twins_found + 48)
