"""Move text: parsing without a position, printing, typed errors."""

from __future__ import annotations

import dataclasses

import pytest
import solrules
from hypothesis import given
from hypothesis import strategies as st
from solrules import IllegalMoveError, InvalidMoveError, InvalidPositionError, Move

PILE_IDS = [f"t{i}" for i in range(1, 19)] + [f"f{i}" for i in range(1, 17)] + ["r", "s", "w"]


@pytest.mark.parametrize(
    ("text", "src", "dst", "count"),
    [("t3>f1", "t3", "f1", 1), ("t2>t5/3", "t2", "t5", 3), ("s>w", "s", "w", 1),
     ("w>s", "w", "s", 1), ("f16>t8", "f16", "t8", 1), ("r>t1", "r", "t1", 1),
     ("t18>t17/13", "t18", "t17", 13), ("t1>t2/2", "t1", "t2", 2)],
)
def test_from_text(text: str, src: str, dst: str, count: int) -> None:
    move = Move.from_text(text)
    assert (move.src, move.dst, move.count) == (src, dst, count)
    assert move == Move(src=src, dst=dst, count=count)
    assert move.text() == str(move) == text


def test_count_defaults_to_one() -> None:
    assert Move(src="t1", dst="f2") == Move.from_text("t1>f2")
    assert Move(src="t1", dst="f2").count == 1


@given(src=st.sampled_from(PILE_IDS), dst=st.sampled_from(PILE_IDS),
       count=st.integers(1, 60))
def test_text_round_trips(src: str, dst: str, count: int) -> None:
    move = Move(src=src, dst=dst, count=count)
    assert Move.from_text(move.text()) == move
    assert move.text() == f"{src}>{dst}" + (f"/{count}" if count > 1 else "")


def test_repr_pastes_back() -> None:
    move = Move.from_text("t2>t5/3")
    assert eval(repr(move), {"Move": Move, "solrules": solrules}) == move


def test_moves_are_frozen_and_hashable() -> None:
    move = Move.from_text("t2>t5/3")
    with pytest.raises(dataclasses.FrozenInstanceError):
        move.count = 4  # type: ignore[misc]
    assert len({move, Move(src="t2", dst="t5", count=3), Move.from_text("t2>t5")}) == 2


@pytest.mark.parametrize(
    "text",
    ["", "t1", "t1>", ">t1", "t1>t2/", "t1>t2/x", "t1>t2/-3", "t1 > t2", "t1>>t2", "t1-t2",
     "t1>t2/1", "t1>t2/0", "t1>t2/3/4", "T1>t2", "t1>t2 junk", "t1>t2/2.5"],
)
def test_bad_syntax_raises_invalid_move_error(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Move.from_text(text)


@pytest.mark.parametrize("text", ["", "t1", "t1>t2/x", "t1>t2/1", "hello world"])
def test_push_text_bad_syntax_is_invalid_not_illegal(text: str) -> None:
    g = solrules.new_game("scotch", 1)
    before = g.position()
    with pytest.raises(InvalidMoveError) as info:
        g.push_text(text)
    assert not isinstance(info.value, IllegalMoveError)
    assert g.position() == before and g.move_stack == []


def test_push_text_illegal_move_is_illegal_not_invalid() -> None:
    g = solrules.new_game("scotch", 1)
    before = g.position()
    with pytest.raises(IllegalMoveError) as info:
        g.push_text("t1>t2/2")
    assert not isinstance(info.value, InvalidMoveError)
    assert str(info.value)  # says why
    with pytest.raises(IllegalMoveError):
        g.push(Move(src="t9", dst="f1"))
    assert g.position() == before and g.move_stack == []


def test_push_text_returns_the_move() -> None:
    g = solrules.new_game("scotch", 1)
    text = g.legal_moves()[0].text()
    assert g.push_text(text) == Move.from_text(text) == g.move_stack[-1]


def test_errors_are_value_errors_and_distinct() -> None:
    for err in (InvalidMoveError, IllegalMoveError, InvalidPositionError):
        assert issubclass(err, ValueError)
    assert not issubclass(IllegalMoveError, InvalidMoveError)
    assert not issubclass(InvalidMoveError, IllegalMoveError)


@pytest.mark.parametrize("game", ["scotch", "quadruple-canfield", "yukon"])
@pytest.mark.parametrize("count", [0, -1, -2, 99, 10**9])
def test_odd_counts_are_refused_not_crashed(game: str, count: int) -> None:
    """A Move built directly (not parsed) may carry any count: it must be refused, never played,
    never crash (a server could build one from a client's JSON)."""
    for seed in (3, 28, 29):
        g = solrules.new_game(game, seed)
        before = g.position()
        ids = [p["pile"] for p in g.board()["piles"]]
        for src in ids:
            for dst in ids:
                try:
                    move = Move(src=src, dst=dst, count=count)
                except ValueError:
                    return  # refused when built: just as good
                assert not g.is_legal(move), move
                assert g.refusal(move), move
                with pytest.raises(IllegalMoveError):
                    g.push(move)
                assert g.position() == before


MOVEISH = st.text(alphabet="tfrsw0123456789>/ -x", max_size=12) | st.text(max_size=12)


@given(text=MOVEISH)
def test_any_text_parses_or_raises_invalid_move_error(text: str) -> None:
    try:
        move = Move.from_text(text)
    except InvalidMoveError:
        return
    assert Move.from_text(move.text()) == move
    assert move.count >= 1


@given(text=MOVEISH)
def test_push_text_only_raises_the_typed_errors(text: str) -> None:
    g = solrules.new_game("quadruple-canfield", 7)
    before = g.position()
    try:
        g.push_text(text)
    except (InvalidMoveError, IllegalMoveError):
        assert g.position() == before
    else:
        g.pop()
        assert g.position() == before
