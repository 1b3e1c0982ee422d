"""The Scotch engine of the solver: its loss proofs (the Kings, the stuck cards) and its move
pruning, against the plain search of ``oracle.py`` and the catalogue.

Hand-made positions have six cards out: the black-Ace foundations (f1, f2) hold Ace to 10 and
want a black Jack, then a red Queen, then a black King; the red-Ace ones (f3, f4) are complete
(a King never comes back). So JC, JS, QH, QD, KC, KS are out, nothing can be given back but a
10 onto a Jack, and the plain search decides every such position in a few dozen positions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import solrules
from solrules import Budget, solve
from solrules.solver_scotch import ScotchEngine, cards_stuck

from .helpers import agree_with_plain_search
from .oracle import model_of, move_of, plain_search, replays
from .test_solver import scotch_endgame

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "seeds" / "catalogue" / "scotch.jsonl"

#: Foundations: f1 clubs/hearts and f2 spades/diamonds from a black Ace, to 10 (10H, 10D on
#: top); f3 and f4 from a red Ace, complete.
FOUNDATIONS = ("f1:AC2H3C4H5C6H7C8H9CTH f2:AS2D3S4D5S6D7S8D9STD "
               "f3:AH2C3H4C5H6C7H8C9HTCJHQCKH f4:AD2S3D4S5D6S7D8S9DTSJDQSKD")


def position(**fans: str) -> str:
    """Scotch position text: the foundations above and the given fans (``t1="KCKS"``)."""
    return "scotch " + FOUNDATIONS + " " + " ".join(
        f"t{i}:{fans.get(f't{i}', '')}" for i in range(1, 19))


#: (fans, some card stuck, winnable by the plain search). A red Queen goes home on a black
#: Jack or onto a black King; a black Jack only home (no red Queen is ever free to take it
#: here unless it moved first) or onto a red Queen.
HAND_MADE = [
    # QH lies over both black Jacks (its foundation predecessors) and both Kings it could go
    # onto, in one fan: it never moves.
    (dict(t1="KCKSJCJSQH", t2="QD"), True, False),
    # Near miss: one King on a fan of its own; QH goes onto it and uncovers the Jacks.
    (dict(t1="KCJCJSQH", t2="KS", t3="QD"), False, True),
    # Near miss: one black Jack elsewhere: it goes home, then QH, then the rest.
    (dict(t1="KCKSJCQH", t2="JS", t3="QD"), False, True),
    # A cycle across two fans: QH's places (JS home, KS) lie under QD, QD's (JC, KC) under QH.
    (dict(t1="KCJCQH", t2="KSJSQD"), True, False),
    # Near miss: KS on a fan of its own breaks the cycle.
    (dict(t1="KCJCQH", t2="JSQD", t3="KS"), False, True),
    # Near miss: the same cycle, but JS over QD: it goes home, QH follows.
    (dict(t1="KCJCQH", t2="KSQDJS"), False, True),
]


@pytest.mark.parametrize(("fans", "stuck", "winnable"), HAND_MADE)
def test_stuck_cards_hand_made(fans: dict[str, str], stuck: bool, winnable: bool) -> None:
    text = position(**fans)
    game = solrules.parse_position(text)
    engine = ScotchEngine(game)
    assert cards_stuck(engine.fans, engine.h, engine.ac) is stuck
    plain = plain_search(model_of(text), 5_000)
    assert plain.verdict == ("won" if winnable else "lost"), plain
    result = solve(game, Budget(nodes=20_000))
    assert result.verdict == plain.verdict
    if stuck:
        assert result.nodes == 1  # proved at the root, before any move
    if result.verdict == "won":
        assert replays(model_of(text), [move_of(t) for t in result.line])


def test_stuck_cards_never_fire_on_a_won_deal() -> None:
    """Every deal the catalogue records won: neither loss proof fires at its root, nor at the
    positions of its winning line (a sample of lines here; all of them with ``-m slow``)."""
    won = [e for e in _catalogue() if e["verdict"] == "won"]
    assert len(won) > 1000
    for e in won:
        engine = ScotchEngine(solrules.new_game("scotch", int(e["seed"])))
        assert engine.moves(), e["seed"]
    for e in won[::70]:
        _never_stuck_along(e)


@pytest.mark.slow
def test_stuck_cards_never_fire_along_any_won_line() -> None:
    for e in _catalogue():
        if e["verdict"] == "won":
            _never_stuck_along(e)


def _never_stuck_along(entry: dict[str, object]) -> None:
    """Along a winning line, played on one engine built at the deal (as the search plays it),
    neither loss proof fires and the engine has moves at every position but the last."""
    game = solrules.new_game("scotch", int(str(entry["seed"])))
    engine = ScotchEngine(game)
    move_of_text = {text: move for move, text in engine._text.items()}
    line = str(entry["line"]).split()
    for k, text in enumerate(line):
        assert not cards_stuck(engine.fans, engine.h, engine.ac), (entry["seed"], k)
        assert not engine._kings or not engine._kings_deadlocked(), (entry["seed"], k)
        assert engine.moves(), (entry["seed"], k)
        engine.apply(move_of_text[text])
    assert engine.won()


def test_kings_rule_sees_a_king_gone_home() -> None:
    """Issue 20: a King that had gone home still counted as on its fan once a card lay where it
    had lain (with that card's colour), and the Kings rule then fired on winnable positions:
    here after move 54 of the catalogue's winning line of this deal, and 7 more positions of
    that line. (The search met it only when that set of Kings had not been looked at before:
    the rule keeps its answer per set of Kings.) An engine built at the deal, the line played
    on it, asked once."""
    entry = next(e for e in _catalogue() if e["seed"] == "15886087168202587479")
    line = str(entry["line"]).split()
    for k in range(50, 64):
        engine = ScotchEngine(solrules.new_game("scotch", int(str(entry["seed"]))))
        move_of_text = {text: move for move, text in engine._text.items()}
        for text in line[:k]:
            engine.apply(move_of_text[text])
        assert engine.moves(), k


def test_catalogue_losses_are_kings_or_stuck_at_the_root() -> None:
    """Every deal recorded lost is proved so at the root (one node)."""
    lost = [e for e in _catalogue() if e["verdict"] == "lost"]
    assert lost
    for e in lost[::10]:
        result = solve(solrules.new_game("scotch", int(e["seed"])), Budget(nodes=10))
        assert (result.verdict, result.nodes) == ("lost", 1), e["seed"]


def _catalogue() -> list[dict[str, object]]:
    with open(CATALOGUE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _end_positions(seed: int, count: int, fewest: int, most: int) -> list[solrules.Game]:
    rng = random.Random(seed)
    return [scotch_endgame(rng, rng.randrange(fewest, most + 1)) for _ in range(count)]


def test_end_positions_agree_with_the_plain_search() -> None:
    tally = agree_with_plain_search(_end_positions(2020, 40, 3, 9), 800)
    assert tally["won"] >= 5 and tally["lost"] >= 3, tally


@pytest.mark.slow
def test_end_positions_agree_with_the_plain_search_many() -> None:
    tally = agree_with_plain_search(_end_positions(4040, 400, 4, 12), 5_000)
    assert tally["won"] >= 50 and tally["lost"] >= 20, tally
