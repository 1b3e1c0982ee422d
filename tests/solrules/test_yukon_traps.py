"""Traps (issue 32, ``solrules.yukon_traps``): a set of waiting events closed in a position proves
it lost, as :func:`~solrules.yukon_losses.yukon_blocked` would; the engine checks the last few
such sets before it asks the rule, so its verdict must always be the rule's.

Checked three ways: in searches (every answer of ``Traps.blocked`` against the rule, and most
positions proved lost by a trap); across random positions (a trap taken from one position,
whenever closed in another, only where the rule proves that one lost); and against the plain
search of ``oracle.py`` (no position in which a trap is closed is won).
"""

from __future__ import annotations

import random

import pytest
import solrules
from solrules import Budget, solve
from solrules.solver_yukon import YukonEngine
from solrules.yukon_losses import Reached, _waiting, yukon_blocked
from solrules.yukon_losses import _tables as yukon_tables
from solrules.yukon_traps import Trap, Traps, _trap

from .oracle import model_of, plain_search
from .test_commuting_losses import _played, _positions, _text


def _tables(engine: YukonEngine) -> tuple[list[int], list[bool], list[bool], list[int], bool]:
    """What ``Trap.closed`` reads of a position, from the tables the engine builds for it."""
    above, hidden, bottom, _where, _height, bottoms, empty = yukon_tables(engine.cols,
                                                                         engine.down)
    return above, hidden, bottom, bottoms, empty


def _traps_of(engine: YukonEngine) -> list[Trap]:
    """Every trap the engine could keep from this position (one per card whose H was not
    reached), none when the rule does not prove it lost."""
    keep: list[Reached] = []
    if not _waiting(engine.cols, engine.down, engine.found, -1, -1, keep):
        return []
    r = keep[0]
    traps = [_trap(r, c, engine.found) for c in range(52) if not r.h[c]]
    return [t for t in traps if t is not None]


def test_the_search_gets_the_rule_s_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """In searches of fresh deals (hard ones of issue 32's sample among them), every answer is
    the rule's, and most positions proved lost are proved by a trap kept."""
    blocked = Traps.blocked
    tally = {"calls": 0, "lost": 0, "asked": 0}
    asked = _waiting

    def counted(*args: object, **kwargs: object) -> bool:
        tally["asked"] += 1
        return asked(*args, **kwargs)  # type: ignore[arg-type]

    def checked(self: Traps, cols: list[list[int]], down: list[int],
                found: list[int]) -> bool:
        verdict = blocked(self, cols, down, found)
        assert verdict == yukon_blocked(cols, down, found), (cols, down, found)
        tally["calls"] += 1
        tally["lost"] += verdict
        return verdict

    monkeypatch.setattr("solrules.yukon_traps._waiting", counted)
    monkeypatch.setattr(Traps, "blocked", checked)
    rng = random.Random(33)
    seeds = [17654218899519423580, 3300840918404133564] + [rng.getrandbits(64)
                                                            for _ in range(12)]
    for seed in seeds:
        solve(solrules.new_game("yukon", seed), Budget(nodes=2_500))
    # Each call asks the rule at most once: those that do not were proved by a trap.
    by_trap = tally["calls"] - tally["asked"]
    assert tally["lost"] > 3_000 and by_trap > tally["lost"] // 2, tally


def _searched(seed: int, nodes: int, monkeypatch: pytest.MonkeyPatch) -> list[YukonEngine]:
    """Engines standing at the positions a search of deal ``seed`` expands (every tenth)."""
    out: list[YukonEngine] = []
    moves = YukonEngine.moves
    count = [0]

    def kept(self: YukonEngine) -> list[int]:
        count[0] += 1
        if count[0] % 10 == 0:
            out.append(YukonEngine(solrules.parse_position(_text(self))))
        return moves(self)

    with monkeypatch.context() as m:
        m.setattr(YukonEngine, "moves", kept)
        solve(solrules.new_game("yukon", seed), Budget(nodes=nodes))
    return out


def test_a_trap_is_closed_only_where_the_rule_proves_the_loss(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Traps taken from positions of searches (hard deals of issue 32's sample) and random
    positions proved lost, each checked in every other position: wherever one is closed, the
    rule proves that position lost (and each is closed in the position it was taken from)."""
    engines = (_searched(17654218899519423580, 6_000, monkeypatch)
               + _searched(3244567723203598860, 6_000, monkeypatch)
               + [YukonEngine(g) for g in _positions(34, 100) + _played(34, 100)])
    tables = [_tables(e) for e in engines]
    traps: list[Trap] = []
    for e, t in zip(engines, tables, strict=True):
        own = _traps_of(e)
        for trap in own:
            assert trap.closed(*t, e.found)
        traps += own[:2]
    assert len(traps) > 300
    closed = 0
    for e, t in zip(engines, tables, strict=True):
        lost = yukon_blocked(e.cols, e.down, e.found)
        for trap in traps:
            if trap.closed(*t, e.found):
                assert lost, _text(e)
                closed += 1
    assert closed > 3 * len(traps)


def test_no_position_a_trap_closes_is_won() -> None:
    """Random end positions where a trap kept from another position is closed: the plain
    search (every legal move, no deadlock rule) never wins one, and proves most lost."""
    rng = random.Random(35)
    games = _positions(35, 200)
    engines = [YukonEngine(g) for g in games]
    traps = [t for e in engines for t in _traps_of(e)[:2]]
    checked = lost = 0
    for g, e in zip(games, engines, strict=True):
        t = _tables(e)
        others = [trap for trap in traps if trap.closed(*t, e.found)]
        if not others or rng.random() < 0.5:
            continue
        outcome = plain_search(model_of(g.position()), 1_500)
        assert outcome.verdict != "won", g.position()
        checked += 1
        lost += outcome.verdict == "lost"
    assert checked >= 15 and lost >= checked // 3
