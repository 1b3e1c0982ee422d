"""Scotch Patience: each rule of the reference, once allowed and once refused, plus a win."""

from __future__ import annotations

import pytest
import solrules

from tests.solrules.helpers import assert_allows, assert_refuses, build, move_set, piles

# Four complete foundations, built up in alternating colour (suit ignored), A..K.
FULL = {
    "f1": "AS2H3C4D5S6H7C8D9STHJCQDKS",
    "f2": "AC2D3S4H5C6D7S8H9CTDJSQHKC",
    "f3": "AH2S3D4C5H6S7D8C9HTSJDQCKH",
    "f4": "AD2C3H4S5D6C7H8S9DTCJHQSKD",
}


def scotch(**layout: str) -> solrules.Game:
    return build("scotch", layout)


# ---------------------------------------------------------------- foundations
def test_any_ace_starts_any_empty_foundation() -> None:
    g = scotch(t1="5CAS", t2="AD")
    for f in ("f1", "f2", "f3", "f4"):
        assert_allows(g, f"t1>{f}")
        assert_allows(g, f"t2>{f}")
    assert {("t1", f, 1) for f in ("f1", "f2", "f3", "f4")} <= move_set(g)


def test_empty_foundation_refuses_a_non_ace() -> None:
    g = scotch(t1="2H", t2="KS")
    assert_refuses(g, "t1>f1")
    assert_refuses(g, "t2>f4")


def test_foundation_builds_up_in_alternating_colour_suit_ignored() -> None:
    g = scotch(f1="AS", t1="2H", t2="2D", t3="7C3C")
    assert_allows(g, "t1>f1")  # black Ace takes a red 2
    assert_allows(g, "t2>f1")  # ... of either red suit
    g.push_text("t2>f1")
    assert_allows(g, "t3>f1")  # then a black 3, any black suit


def test_foundation_refuses_same_colour() -> None:
    g = scotch(f1="AS", t1="2C", t2="2S")
    assert_refuses(g, "t1>f1")
    assert_refuses(g, "t2>f1")  # same suit too: colours must alternate


def test_foundation_refuses_wrong_rank() -> None:
    g = scotch(f1="AS2H", t1="4C", t2="2C", t3="AC")
    assert_refuses(g, "t1>f1")  # skips a rank
    assert_refuses(g, "t2>f1")  # same rank
    assert_refuses(g, "t3>f1")  # lower rank


def test_foundation_takes_the_king_but_never_wraps() -> None:
    g = scotch(f1=FULL["f1"][:-2], f2=FULL["f2"], t1="KS")
    assert_allows(g, "t1>f1")
    g.push_text("t1>f1")
    assert piles(g)["f1"][-1] == "KS" and len(piles(g)["f1"]) == 13
    h = scotch(f1=FULL["f1"], t1=FULL["f2"][:2], t2="AH")
    assert_refuses(h, "t1>f1")  # 2D is not above a King: no wrap
    assert_refuses(h, "t2>f1")  # an Ace does not start again on a King: at most 13 cards


# ---------------------------------------------------------------- tableau
@pytest.mark.parametrize("card", ["7C", "7S", "7H", "7D"])
def test_fan_takes_one_rank_lower_any_suit_or_colour(card: str) -> None:
    g = scotch(t1=card, t2="8C")
    assert_allows(g, "t1>t2")


@pytest.mark.parametrize("card", ["6C", "8H", "9D", "KS"])
def test_fan_refuses_other_ranks(card: str) -> None:
    g = scotch(t1=card, t2="8C")
    assert_refuses(g, "t1>t2")


def test_aces_go_on_twos_but_kings_never_wrap_onto_aces() -> None:
    g = scotch(t1="AS", t2="2S", t3="KH", t4="AD")
    assert_allows(g, "t1>t2")
    assert_refuses(g, "t3>t4")  # ranks don't wrap: a King only goes to a foundation
    assert_refuses(g, "t3>t1")


def test_only_the_top_card_moves_one_at_a_time() -> None:
    g = scotch(t1="5D8H7C", t2="9S", t3="8D")
    assert_allows(g, "t1>t3")
    assert_refuses(g, "t1>t2/2")  # 8H 7C would fit on 9S, but sequences never move
    assert_refuses(g, "t1>t3/2")
    assert_refuses(g, "t1>t2/3")
    h = scotch(t1="AS2H")
    assert_refuses(h, "t1>f1/2")


def test_an_empty_fan_is_never_filled_again() -> None:
    g = scotch(t1="KS", t2="5H", f1="AC", t3="6D")
    assert piles(g)["t4"] == []
    assert_refuses(g, "t1>t4")  # not even a King
    assert_refuses(g, "t2>t4")
    assert_refuses(g, "f1>t4")  # nor a foundation's top card
    g.push_text("t2>t3")  # empties t2 ...
    assert piles(g)["t2"] == []
    assert_refuses(g, "t1>t2")  # ... for good
    assert all(m.dst != "t2" for m in g.legal_moves())


def test_a_foundation_top_card_may_come_back_onto_a_fan() -> None:
    g = scotch(f1="AS2H", t1="3C", t2="5C")
    assert_allows(g, "f1>t1")
    assert_refuses(g, "f1>t2")
    g.push_text("f1>t1")
    assert piles(g)["f1"] == ["AS"] and piles(g)["t1"] == ["3C", "2H"]
    assert g.progress() == (1, 52)
    g.pop()
    assert piles(g)["f1"] == ["AS", "2H"]


def test_foundation_to_foundation_is_refused() -> None:
    g = scotch(f1="AS2H", f2="AC", f3="AD")
    assert_refuses(g, "f1>f2")  # 2H would suit AC by the build rule, still refused
    assert_refuses(g, "f2>f4")  # an Ace to an empty foundation
    assert_refuses(g, "f3>f1")


@pytest.mark.parametrize("text", ["t1>t1", "t1>t19", "t19>t1", "t1>r", "t1>w", "s>w", "w>s",
                                  "t1>f5", "t0>t2", "f0>t2"])
def test_moves_naming_missing_piles_or_the_same_pile_are_refused(text: str) -> None:
    g = scotch(t1="7H", t2="8S")
    assert_refuses(g, text)


# ---------------------------------------------------------------- winning
def test_a_win_is_reachable_and_detected() -> None:
    g = scotch(f1=FULL["f1"], f2=FULL["f2"], f3=FULL["f3"][:-4], t1="KH", t2="QC",
               f4=FULL["f4"][:-2], t3="KD")
    assert not g.is_won() and g.progress() == (49, 52)
    for text in ("t2>f3", "t3>f4", "t1>f3"):
        assert not g.is_won()
        g.push_text(text)
    assert g.is_won() and g.progress() == (52, 52)
    assert g.legal_moves() == []  # every fan is empty and cannot be filled again
    g.pop()
    assert not g.is_won() and g.progress() == (51, 52)


def test_all_cards_on_foundations_is_won_from_position_text() -> None:
    g = build("scotch", FULL)
    assert g.is_won() and g.progress() == (52, 52)
    assert not scotch(**{**FULL, "f4": FULL["f4"][:-2], "t1": "KD"}).is_won()
