"""Yukon's waiting events are not asked after a move that can be taken back (issue 32;
``solrules.solver_yukon``, *not asked after a move that can be taken back*): such a move leaves
:func:`~solrules.yukon_losses.yukon_blocked`'s verdict as it was. Checked here on random
positions through the public ``Game`` API (both verdicts, before and after every such move),
and in searches: every position the engine does not ask about is one the rule does not prove
lost. The rule's own soundness is held to the plain search by ``test_solver_yukon.py``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import solrules
from solrules import Budget, solve
from solrules.solver_yukon import YukonEngine
from solrules.yukon_losses import yukon_blocked

from .test_commuting_losses import _move, _played, _positions


def _blocked(g: solrules.Game) -> bool:
    engine = YukonEngine(g)
    return yukon_blocked(engine.cols, engine.down, engine.found)


def test_a_move_that_can_be_taken_back_keeps_the_verdict() -> None:
    """Before and after every legal move the engine calls reversible, yukon_blocked says the
    same, on end positions (many proved lost) and on positions of played deals."""
    same = lost = 0
    for g in _positions(41, 150) + _played(41, 150):
        before = _blocked(g)
        engine = YukonEngine(g)
        for text in sorted(g.legal_by_text()):
            if not engine.reversible(_move(g, text)):
                continue
            after = g.copy()
            after.push_text(text)
            assert _blocked(after) == before, (g.position(), text)
            same += 1
            lost += before
    assert same > 200 and lost > 20


def test_the_search_skips_only_positions_the_rule_does_not_prove(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In searches of fresh deals (the hard ones of issue 32's sample among them), every
    position expanded without asking yukon_blocked is one it does not prove lost; about a
    third of the positions are."""
    moves = YukonEngine.moves
    tally = {"skipped": 0, "asked": 0}

    def checked(self: YukonEngine) -> Any:
        if self.unblocked:
            tally["skipped"] += 1
            assert not yukon_blocked(self.cols, self.down, self.found)
        else:
            tally["asked"] += 1
        return moves(self)

    monkeypatch.setattr(YukonEngine, "moves", checked)
    rng = random.Random(32)
    seeds = [3244567723203598860, 17654218899519423580] + [rng.getrandbits(64)
                                                            for _ in range(10)]
    for seed in seeds:
        solve(solrules.new_game("yukon", seed), Budget(nodes=3_000))
    assert tally["skipped"] > 2_000 and tally["skipped"] * 8 > tally["asked"], tally


def test_the_flag_follows_undo_and_restore() -> None:
    """``unblocked`` is set where the rule was asked and said no, kept by a move that can be
    taken back, dropped by any other move, and restored by undo and by a snapshot."""
    tried = 0
    for g in _played(43, 150):
        engine = YukonEngine(g)
        assert not engine.unblocked
        moves = engine.moves()
        if not moves:
            continue
        assert engine.unblocked
        snap = engine.snapshot()
        for move in moves:
            back = engine.reversible(move)
            record = engine.apply(move)
            assert engine.unblocked == back
            engine.undo(record)
            assert engine.unblocked
            tried += back
        engine.apply(moves[-1])
        engine.restore(snap)
        assert engine.unblocked
    assert tried > 10
