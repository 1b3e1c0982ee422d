"""Quadruple Canfield: each rule of the reference, once allowed and once refused, plus a win.

Unless a test says otherwise, the base rank is 5 and the cards not named lie face down in the stock
(see helpers.position_text); every tableau pile named is non-empty while the reserve has cards.
"""

from __future__ import annotations

import pytest
import solrules

from tests.solrules.helpers import (
    assert_allows,
    assert_refuses,
    build,
    move_set,
    piles,
    position_text,
)
from tests.solrules.model import RANKS

GAME = "quadruple-canfield"
CLUBS, SPADES, HEARTS, DIAMONDS = ("f1", "f2", "f3", "f4"), ("f5", "f6", "f7", "f8"), \
    ("f9", "f10", "f11", "f12"), ("f13", "f14", "f15", "f16")
EIGHT = {f"t{i}": c for i, c in enumerate(["3D", "3D", "3D", "3D", "JS", "JS", "JS", "JS"], 1)}


def qc(base: str = "5", filler: str | None = None, **layout: str) -> solrules.Game:
    """Eight non-empty tableau piles by default (3D/JS, harmless), overridden by `layout`."""
    return build(GAME, {**EIGHT, **layout}, base=base, filler=filler)


def suit_run(suit: str, base: str, n: int = 13) -> str:
    """n cards of `suit` from the base rank upwards, wrapping K->A."""
    start = RANKS.index(base)
    return "".join(RANKS[(start + i) % 13] + suit for i in range(n))


# ---------------------------------------------------------------- foundations
def test_empty_foundation_takes_the_base_rank_of_its_suit() -> None:
    g = qc(t1="5C", t2="5H", f1="5C")
    for f in CLUBS[1:]:
        assert_allows(g, f"t1>{f}")
    assert {("t1", f, 1) for f in CLUBS[1:]} <= move_set(g)
    for f in HEARTS:
        assert_allows(g, f"t2>{f}")


def test_empty_foundation_refuses_other_ranks_and_other_suits() -> None:
    g = qc(t1="6C", t2="AC", t3="5C")
    for f in CLUBS:
        assert_refuses(g, f"t1>{f}")
        assert_refuses(g, f"t2>{f}")  # an Ace does not start a foundation when the base is 5
    for f in SPADES + HEARTS + DIAMONDS:
        assert_refuses(g, f"t3>{f}")  # the clubs group only


def test_foundation_builds_up_by_suit() -> None:
    g = qc(f1="5C6C", t1="7C", t2="7S", t3="8C", t4="6C")
    assert_allows(g, "t1>f1")
    assert_refuses(g, "t2>f1")  # other suit (and the wrong group)
    assert_refuses(g, "t3>f1")  # skips a rank
    assert_refuses(g, "t4>f1")  # same rank


def test_foundation_wraps_from_king_to_ace() -> None:
    g = qc(base="Q", f1="QCKC", t1="AC", t2="2C")
    assert_allows(g, "t1>f1")
    assert_refuses(g, "t2>f1")
    g.push_text("t1>f1")
    assert_allows(g, "t2>f1")


def test_foundation_holds_at_most_13_cards() -> None:
    full = suit_run("C", "5")
    assert full.endswith("4C") and len(full) == 26
    g = qc(f1=full[:-2], t1="4C", t2="5C")
    assert_allows(g, "t1>f1")
    g.push_text("t1>f1")
    assert len(piles(g)["f1"]) == 13
    assert_refuses(g, "t2>f1")  # 5C would follow 4C by the wrap, but 13 is the limit


def test_distinct_foundations_are_distinct_moves() -> None:
    g = qc(t1="5D")
    assert {("t1", f, 1) for f in DIAMONDS} <= move_set(g)


def test_a_foundation_top_card_comes_back_onto_a_tableau_pile() -> None:
    g = qc(f1="5C6C", t1="7H", t2="7C", t3="8D")
    assert_allows(g, "f1>t1")
    assert_refuses(g, "f1>t2")  # same colour
    assert_refuses(g, "f1>t3")  # wrong rank
    g.push_text("f1>t1")
    assert piles(g)["f1"] == ["5C"] and piles(g)["t1"] == ["7H", "6C"]


def test_foundation_to_foundation_is_refused() -> None:
    """"A foundation's top card may come back into play onto a tableau pile": only there."""
    g = qc(f1="5C6C", f2="5C", f5="5S")
    assert_refuses(g, "f1>f2")
    assert_refuses(g, "f2>f3")
    assert_refuses(g, "f5>f6")


def test_the_base_rank_stays_when_every_foundation_is_empty() -> None:
    g = qc(f1="5C", t1="6D", t2="6C", t3="5C")
    assert_allows(g, "f1>t1")  # the base card itself goes back to the tableau
    g.push_text("f1>t1")
    assert all(not piles(g)[f] for f in CLUBS + SPADES + HEARTS + DIAMONDS)
    assert "base=5" in g.position().split()
    assert_refuses(g, "t2>f1")
    assert_allows(g, "t3>f1")
    assert_allows(g, "t1>f2")  # 5C is now the top of t1
    h = solrules.parse_position(g.position())
    assert_refuses(h, "t2>f1")
    assert_allows(h, "t1>f4")


# ---------------------------------------------------------------- tableau
def test_tableau_builds_down_in_alternating_colour() -> None:
    g = qc(t1="8S", t2="7H", t3="7C", t4="6H", t5="8D")
    assert_allows(g, "t2>t1")
    assert_refuses(g, "t3>t1")  # same colour
    assert_refuses(g, "t4>t1")  # skips a rank
    assert_refuses(g, "t2>t5")  # same colour
    assert_refuses(g, "t5>t1")  # same rank


def test_tableau_wraps_a_king_onto_an_ace() -> None:
    g = qc(t1="AH", t2="KS", t3="KD", t4="QH")
    assert_allows(g, "t2>t1")
    assert_refuses(g, "t3>t1")  # same colour
    assert_refuses(g, "t4>t1")


def test_runs_move_as_a_unit_partial_runs_included() -> None:
    g = qc(t1="JD9C8H7S", t2="TD", t3="9S", t4="8D", t5="TH")
    assert_allows(g, "t1>t2/3")  # 9C 8H 7S
    assert_allows(g, "t1>t5/3")
    assert_allows(g, "t1>t3/2")  # 8H 7S (partial run)
    assert_allows(g, "t1>t4")  # 7S
    assert_refuses(g, "t1>t2/2")  # 8H on TD
    assert_refuses(g, "t1>t3/3")  # 9C on 9S
    assert_refuses(g, "t1>t2/4")  # JD 9C is not in sequence


def test_out_of_sequence_cards_do_not_move_together() -> None:
    g = qc(t1="9C8C7H", t2="TH", t3="9S", t4="9D")
    assert_refuses(g, "t1>t2/3")  # 9C 8C: same colour, so 9C..7H is no run
    assert_refuses(g, "t1>t3/2")  # 8C on 9S: same colour
    assert_allows(g, "t1>t4/2")  # 8C 7H is a run and fits on 9D


def test_runs_may_wrap_through_king_on_ace() -> None:
    g = qc(t1="8D2CAHKSQH", t2="3H", t3="2S", t4="AD", t5="2H")
    assert_allows(g, "t1>t2/4")  # 2C AH KS QH
    assert_allows(g, "t1>t3/3")  # AH KS QH
    assert_allows(g, "t1>t4/2")  # KS QH on an Ace
    assert_refuses(g, "t1>t5/3")  # AH on 2H: same colour
    assert_refuses(g, "t1>t2/5")  # 8D is not above 2C


def test_runs_never_go_to_a_foundation() -> None:
    g = qc(f1="5C6C", t1="8C7C", t2="8D7C")
    assert_allows(g, "t2>f1")
    assert_refuses(g, "t2>f1/2")
    g2 = qc(f9="5H", t1="7C6H")
    assert_refuses(g2, "t1>f9/2")


# ---------------------------------------------------------------- spaces and the reserve
def test_a_space_is_refilled_at_once_from_the_reserve_and_undone_with_the_move() -> None:
    g = qc(r="KC2D|JH", t1="6H", t2="7S")
    before = g.position()
    g.push_text("t1>t2")
    shown = piles(g)
    assert shown["t1"] == ["JH"]  # part of the same move
    assert shown["r"] == [None, "2D"]  # and the next reserve card turns up
    assert len(g.move_stack) == 1
    g.pop()
    assert g.position() == before
    assert piles(g)["r"] == [None, None, "JH"] and piles(g)["t1"] == ["6H"]


def test_a_whole_pile_to_a_foundation_refills_the_space_too() -> None:
    g = qc(r="KC|2D", t1="5C", f1="")
    g.push_text("t1>f1")
    assert piles(g)["t1"] == ["2D"] and piles(g)["r"] == ["KC"]
    g.pop()
    assert piles(g)["t1"] == ["5C"] and piles(g)["r"] == [None, "2D"]


def test_a_whole_run_moved_away_refills_the_space() -> None:
    g = qc(r="QS", t1="8H7S", t2="9C")
    g.push_text("t1>t2/2")
    assert piles(g)["t1"] == ["QS"] and piles(g)["r"] == []


def test_with_the_reserve_empty_a_space_stays_empty_until_filled_by_the_player() -> None:
    g = qc(r="", t1="6H", t2="7S", t3="QD9C8H", t4="TH", w="AC2C3C", f1="5C6C")
    g.push_text("t1>t2")
    assert piles(g)["t1"] == []
    assert_allows(g, "w>t1")  # any card ...
    assert_allows(g, "t3>t1/2")  # ... or movable run
    assert_allows(g, "t3>t1")
    assert_refuses(g, "t4>t1")  # all of t4: a whole pile onto an empty one
    assert_allows(g, "f1>t1")  # a foundation's top card too
    assert_refuses(g, "t3>t1/3")  # QD 9C is no run
    g.push_text("t3>t1/2")
    assert piles(g)["t1"] == ["9C", "8H"]


def test_moving_a_whole_pile_onto_an_empty_pile_is_never_legal() -> None:
    g = qc(r="", t1="6H", t2="7S", t3="9C8H", t4="KD")
    g.push_text("t1>t2")
    assert_refuses(g, "t3>t1/2")
    assert_refuses(g, "t4>t1")
    assert_allows(g, "t3>t1")


def test_only_the_reserve_top_card_plays_and_the_next_turns_up() -> None:
    g = qc(r="6D7C|5C", t1="6H", f1="")
    assert_allows(g, "r>f1")
    assert_allows(g, "r>t1")
    assert_refuses(g, "r>t1/2")
    assert_refuses(g, "r>f1/2")
    g.push_text("r>t1")
    assert piles(g)["r"] == [None, "7C"]
    assert_refuses(g, "r>t1")  # 7C on 5C
    g.pop()
    assert piles(g)["r"] == [None, None, "5C"]


def test_nothing_is_played_onto_the_reserve_or_the_waste() -> None:
    g = qc(r="6D|6H", w="6C", t1="5S", f1="5C", t2="5D")
    for text in ("t1>r", "t1>w", "f1>r", "f1>w", "w>r", "r>w", "t2>w", "t2>r"):
        assert_refuses(g, text)


# ---------------------------------------------------------------- stock and waste
def test_stock_turns_three_cards_one_by_one_then_fewer_at_the_end() -> None:
    # a stock of 4 known cards; the other cards lie in the reserve
    text = position_text(GAME, {**EIGHT, "s": "AS2S3S4S|", "w": ""}, base="5", filler="r")
    g = solrules.parse_position(text)
    assert piles(g)["s"] == [None] * 4 and piles(g, reveal=True)["s"] == ["AS", "2S", "3S", "4S"]
    assert_refuses(g, "w>s")  # the stock is not empty yet
    assert_refuses(g, "w>t1")  # nothing on the waste
    g.push_text("s>w")
    assert piles(g)["w"] == ["4S", "3S", "2S"]  # all face up, top 2S
    assert piles(g)["s"] == [None]
    assert_refuses(g, "w>s")
    g.push_text("s>w")
    assert piles(g)["w"] == ["4S", "3S", "2S", "AS"] and piles(g)["s"] == []
    assert_refuses(g, "s>w")  # nothing left to turn
    assert_allows(g, "w>s")
    g.push_text("w>s")
    assert piles(g)["w"] == [] and piles(g)["s"] == [None] * 4
    assert_refuses(g, "w>s")  # nothing to turn over
    g.push_text("s>w")
    assert piles(g)["w"] == ["4S", "3S", "2S"]  # the same order as the last pass
    while g.move_stack:
        g.pop()
    assert g.position() == text


def test_passes_through_the_stock_are_unlimited_and_repeat() -> None:
    """Each pass deals the cards in the same order as the last one, the deal's 3 included."""
    g = solrules.new_game(GAME, 31)
    wastes = []
    for _ in range(3):
        while piles(g)["s"]:
            g.push_text("s>w")
        assert not g.is_legal(solrules.Move.from_text("s>w"))
        wastes.append(piles(g)["w"])
        g.push_text("w>s")
        assert piles(g)["w"] == [] and len(piles(g)["s"]) == 160
    assert wastes[0] == wastes[1] == wastes[2]
    assert len(wastes[0]) == 160


def test_only_the_waste_top_card_plays() -> None:
    g = qc(w="6D6H7C", t1="8D", t2="7S", f1="5C6C")
    assert piles(g)["w"] == ["6D", "6H", "7C"]  # every waste card is face up
    assert_allows(g, "w>t1")
    assert_allows(g, "w>f1")
    assert_refuses(g, "w>t2")  # 6H/6D would fit, but they are not on top
    assert_refuses(g, "w>t1/2")
    assert_refuses(g, "w>f1/2")


# ---------------------------------------------------------------- winning
def near_won(base: str) -> dict[str, str]:
    layout = {}
    for i, suit in enumerate("CSHD"):
        for k in range(4):
            layout[f"f{4 * i + k + 1}"] = suit_run(suit, base)
    return layout


@pytest.mark.parametrize("base", ["A", "5", "K"])
def test_a_win_is_reachable_and_detected(base: str) -> None:
    layout = near_won(base)
    last_two = layout["f16"][-4:]
    layout["f16"] = layout["f16"][:-4]
    # A space cannot stay empty while the reserve has cards, so the reserve is out here.
    layout["t1"] = last_two[:2]  # a tableau card
    layout["w"] = last_two[2:]  # and the waste's top
    text = position_text(GAME, layout, base=base)
    g = solrules.parse_position(text)
    assert g.progress() == (206, 208) and not g.is_won()
    g.push_text("t1>f16")
    assert not g.is_won()
    g.push_text("w>f16")
    assert g.is_won() and g.progress() == (208, 208)
    g.pop()
    assert not g.is_won()


def test_a_win_through_the_tableau() -> None:
    layout = near_won("9")
    tail = layout["f1"][-6:]  # 6C 7C 8C
    layout["f1"] = layout["f1"][:-6]
    text = position_text(GAME, {**layout, "t1": tail[4:], "t2": tail[2:4], "t3": tail[:2]},
                         base="9")
    g = solrules.parse_position(text)
    for move in ("t3>f1", "t2>f1", "t1>f1"):
        assert not g.is_won()
        g.push_text(move)
    assert g.is_won()


def test_all_cards_on_foundations_is_won_from_position_text() -> None:
    assert build(GAME, near_won("7"), base="7").is_won()
