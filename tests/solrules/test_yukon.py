"""Yukon: each rule of the reference, once allowed and once refused, plus a win."""

from __future__ import annotations

import pytest
import solrules

from tests.solrules.helpers import assert_allows, assert_refuses, build, move_set, piles

SUIT_RUNS = {f"f{i}": "".join(r + s for r in "A23456789TJQK") for i, s in enumerate("CSHD", 1)}


def yukon(**layout: str) -> solrules.Game:
    return build("yukon", layout)


# ---------------------------------------------------------------- foundations
def test_any_ace_starts_any_empty_foundation() -> None:
    g = yukon(t1="AS", t2="AD")
    for f in ("f1", "f2", "f3", "f4"):
        assert_allows(g, f"t1>{f}")
    assert {("t2", f, 1) for f in ("f1", "f2", "f3", "f4")} <= move_set(g)


def test_empty_foundation_refuses_a_non_ace() -> None:
    g = yukon(t1="2S", t2="KH")
    assert_refuses(g, "t1>f1")
    assert_refuses(g, "t2>f2")


def test_foundation_builds_up_in_the_aces_suit() -> None:
    g = yukon(f2="AS", t1="2S", t2="2C", t3="2H", t4="3S")
    assert_allows(g, "t1>f2")
    assert_refuses(g, "t2>f2")  # same colour, other suit
    assert_refuses(g, "t3>f2")  # alternating colour is not Yukon's rule
    assert_refuses(g, "t4>f2")  # skips a rank
    g.push_text("t1>f2")
    assert_allows(g, "t4>f2")


def test_foundation_takes_the_king_last() -> None:
    g = yukon(f1=SUIT_RUNS["f1"][:-2], t1="KC", t2="KS")
    assert_allows(g, "t1>f1")
    assert_refuses(g, "t2>f1")


def test_cards_never_come_back_from_a_foundation() -> None:
    g = yukon(f1="AS2S", t1="3H", f2="AC")
    assert_refuses(g, "f1>t1")  # 2S on 3H would be a fine tableau build
    assert_refuses(g, "f1>f3")
    assert_refuses(g, "f2>t5")  # nor to an empty column
    assert all(not m.src.startswith("f") for m in g.legal_moves())


def test_only_a_columns_top_card_goes_to_a_foundation() -> None:
    g = yukon(t1="AS5H", t2="5C|AD", f1="AC2C")
    assert_refuses(g, "t1>f2/2")  # the Ace is covered
    assert_refuses(g, "t1>f3")  # the top card 5H is not an Ace
    assert_allows(g, "t2>f2")
    g2 = yukon(t1="3C4D", f1="AC2C")
    assert_refuses(g2, "t1>f1/2")
    assert_refuses(g2, "t1>f1")


# ---------------------------------------------------------------- tableau
@pytest.mark.parametrize(("card", "ok"), [("7H", True), ("7D", True), ("7C", False),
                                          ("7S", False), ("6H", False), ("8H", False)])
def test_column_takes_one_rank_lower_of_opposite_colour(card: str, ok: bool) -> None:
    g = yukon(t1=card, t2="8S")
    (assert_allows if ok else assert_refuses)(g, "t1>t2")


def test_aces_do_not_take_kings() -> None:
    g = yukon(t1="KH", t2="AS", t3="2C", t4="AH")
    assert_refuses(g, "t1>t2")
    assert_allows(g, "t4>t3")


def test_any_face_up_card_moves_with_every_card_above_it_in_sequence_or_not() -> None:
    g = yukon(t1="9D|7HQC2D", t2="8S", t3="3S", t4="KC")
    assert_allows(g, "t1>t2/3")  # 7H carries QC and 2D along, out of sequence
    assert_refuses(g, "t1>t2/2")  # QC does not go on 8S
    assert_refuses(g, "t1>t2")  # neither does 2D
    assert_allows(g, "t1>t3")  # 2D alone on 3S
    assert_refuses(g, "t1>t4/2")  # QC (with 2D) on KC: same colour


def test_group_rules_colour_of_the_moved_bottom_card() -> None:
    g = yukon(t1="9D|7HQC2D", t2="KD", t3="KC")
    assert_allows(g, "t1>t2/2")  # QC on KD: opposite colour
    assert_refuses(g, "t1>t3/2")  # QC on KC: same colour


def test_face_down_cards_never_move() -> None:
    g = yukon(t1="9D|7H", t2="TS", t3="8S")
    assert_refuses(g, "t1>t2/2")  # 9D would fit on TS but is face down
    assert_allows(g, "t1>t3")
    assert_refuses(g, "t1>t3/3")  # more cards than the column holds


def test_a_turned_up_card_flips_automatically_and_back_on_undo() -> None:
    g = yukon(t1="4C9D|7H", t2="8S")
    before = g.position()
    g.push_text("t1>t2")
    assert piles(g)["t1"] == [None, "9D"]
    assert piles(g, reveal=True)["t1"] == ["4C", "9D"]
    assert ("t1", "t2", 1) not in move_set(g)
    g.pop()
    assert piles(g)["t1"] == [None, None, "7H"]
    assert g.position() == before


def test_an_empty_column_takes_a_king_with_whatever_lies_on_it() -> None:
    g = yukon(t1="4C|KH5S2D", t2="QH", t3="4D|QS")
    assert piles(g)["t4"] == []
    assert_allows(g, "t1>t4/3")
    assert_refuses(g, "t1>t4/2")  # 5S is no King
    assert_refuses(g, "t2>t4")  # nor is a Queen
    assert_refuses(g, "t3>t4")
    g.push_text("t1>t4/3")
    assert piles(g)["t1"] == ["4C"]  # and the card under the King turned up
    assert piles(g)["t4"] == ["KH", "5S", "2D"]


def test_moving_a_whole_column_onto_an_empty_one_is_never_legal() -> None:
    g = yukon(t1="KH5S", t2="KC")
    assert_refuses(g, "t1>t3/2")
    assert_refuses(g, "t2>t3")
    assert not any(m.src in {"t1", "t2"} and m.dst in {"t3", "t4", "t5", "t6"}
                   for m in g.legal_moves())
    assert ("t7", "t3", 1) in move_set(g)  # the filler's KD has face-down cards under it


@pytest.mark.parametrize("text", ["t1>t1", "t1>t8", "t8>t1", "t1>r", "s>w", "w>s", "t1>f5",
                                  "t1>t2/9"])
def test_moves_naming_missing_piles_or_the_same_pile_are_refused(text: str) -> None:
    g = yukon(t1="7H", t2="8S")
    assert_refuses(g, text)


# ---------------------------------------------------------------- winning
def test_a_win_is_reachable_and_detected() -> None:
    g = yukon(f1=SUIT_RUNS["f1"], f2=SUIT_RUNS["f2"], f3=SUIT_RUNS["f3"][:-2],
              f4=SUIT_RUNS["f4"][:-6], t1="QD|JD", t2="KD", t3="KH")
    assert g.progress() == (48, 52) and not g.is_won()
    for text in ("t1>f4", "t1>f4", "t2>f4", "t3>f3"):  # the first move turns QD up
        assert not g.is_won()
        g.push_text(text)
    assert g.is_won() and g.progress() == (52, 52)
    assert g.legal_moves() == []
    g.pop()
    assert not g.is_won()


def test_all_cards_on_foundations_is_won_from_position_text() -> None:
    assert build("yukon", SUIT_RUNS).is_won()
    assert not yukon(**{**SUIT_RUNS, "f4": SUIT_RUNS["f4"][:-2], "t1": "KD"}).is_won()
