"""Position text, board views, copy, progress: the Game object's bookkeeping."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import solrules
from solrules import InvalidPositionError

from tests.solrules.helpers import build, piles, position_text

GAMES = ("scotch", "quadruple-canfield", "yukon")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [0, 1, 32000, 2**64 - 1])
def test_deal_position_round_trips(game: str, seed: int) -> None:
    g = solrules.new_game(game, seed)
    text = g.position()
    assert "\n" not in text and text.split()[0] == game
    h = solrules.parse_position(text)
    assert h.position() == text
    assert (h.name, h.seed) == (game, None)
    assert h.move_stack == []
    assert h.board() == g.board() and h.board(reveal=True) == g.board(reveal=True)
    assert h.legal_moves() == g.legal_moves() or set(h.legal_moves()) == set(g.legal_moves())


@pytest.mark.parametrize(
    ("game", "layout", "base"),
    [("scotch", {"t1": "AS", "t2": "2H", "f1": "AD"}, None),
     ("yukon", {"t1": "4C9D|7H", "t2": "8S", "f3": "AH2H"}, None),
     ("quadruple-canfield", {"r": "KC2D|JH", "t1": "6H", "t2": "7S", "w": "AC2C3C", "f5": "5S",
                             **{f"t{i}": c for i, c in enumerate(["3D", "3S"] * 3, 3)}}, "5")],
)
def test_hand_built_position_round_trips(game: str, layout: dict[str, str],
                                         base: str | None) -> None:
    text = position_text(game, layout, base)
    g = solrules.parse_position(text)
    assert g.position() == text
    for pid, cards in layout.items():
        down = cards.split("|")[0] if "|" in cards else ""
        shown = piles(g)[pid]
        assert shown[: len(down) // 2] == [None] * (len(down) // 2)
        assert "".join(str(c) for c in piles(g, reveal=True)[pid]) == cards.replace("|", "")


def test_board_format() -> None:
    g = solrules.new_game("yukon", 5)
    board = g.board()
    assert board["game"] == "yukon"
    ids = [p["pile"] for p in board["piles"]]
    assert sorted(ids) == sorted([f"f{i}" for i in range(1, 5)] + [f"t{i}" for i in range(1, 8)])
    assert len(ids) == len(set(ids))
    for p in board["piles"]:
        assert set(p) >= {"pile", "cards"}
        assert all(c is None or (isinstance(c, str) and len(c) == 2) for c in p["cards"])
    assert g.board(reveal=False) == board


@pytest.mark.parametrize("game", GAMES)
def test_board_never_reveals_a_face_down_card(game: str) -> None:
    g = solrules.new_game(game, 99)
    hidden = 0
    for p, cards in piles(g).items():
        full = piles(g, reveal=True)[p]
        hidden += cards.count(None)
        for shown, real in zip(cards, full, strict=True):
            assert shown is None or shown == real
    assert hidden == {"scotch": 0, "yukon": 21, "quadruple-canfield": 38 + 157}[game]
    text = repr(g.board())
    if game == "yukon":  # t2's face-down card's text occurs nowhere else in the view
        secret = piles(g, reveal=True)["t2"][0]
        assert secret is not None and secret not in text


def test_copy_is_independent_and_keeps_the_move_stack() -> None:
    g = solrules.new_game("yukon", 8)
    g.push(g.legal_moves()[0])
    c = g.copy()
    assert c.move_stack == g.move_stack and c.position() == g.position()
    assert (c.name, c.seed) == (g.name, g.seed)
    c.push(c.legal_moves()[0])
    assert len(g.move_stack) == 1 and c.position() != g.position()
    c.pop()
    c.pop()
    assert len(g.move_stack) == 1
    assert c.position() == solrules.new_game("yukon", 8).position()
    g.pop()
    assert g.position() == c.position()


def test_pop_on_a_fresh_game_raises_index_error() -> None:
    for game in GAMES:
        with pytest.raises(IndexError):
            solrules.new_game(game, 1).pop()


def test_progress_counts_foundation_cards() -> None:
    g = build("scotch", {"f1": "AS2H3C", "f2": "AD", "t1": "4D", "t2": "5S"})
    assert g.progress() == (4, 52)
    g.push_text("t1>f1")
    assert g.progress() == (5, 52)
    g.push_text("f1>t2")
    assert g.progress() == (4, 52)
    g.pop()
    g.pop()
    assert g.progress() == (4, 52)
    assert build("yukon", {"f1": "AC"}).progress() == (1, 52)


# ---------------------------------------------------------------- invalid position text
def _yukon() -> str:
    return solrules.new_game("yukon", 1).position()


def _qc() -> str:
    return solrules.new_game("quadruple-canfield", 1).position()


def _replace_pile(text: str, pile: str, cards: str) -> str:
    tokens = text.split()
    out = [f"{pile}:{cards}" if t.startswith(f"{pile}:") else t for t in tokens]
    assert out != tokens or f"{pile}:{cards}" in tokens
    return " ".join(out)


def _qc_token(pile: str, change: Callable[[str], str]) -> str:
    """The deal of quadruple-canfield 1 with pile `pile`'s cards text changed by `change`."""
    tokens = _qc().split()
    out = [f"{pile}:{change(t[len(pile) + 1:])}" if t.startswith(f"{pile}:") else t
           for t in tokens]
    assert out != tokens
    return " ".join(out)


def _t1(text: str) -> str:
    return next(t.split(":", 1)[1] for t in text.split() if t.startswith("t1:"))


@pytest.mark.parametrize(
    "make",
    [
        lambda: "",
        lambda: "   ",
        lambda: _yukon().replace("yukon", "klondike", 1),
        lambda: _replace_pile(_yukon(), "t1", ""),  # a card missing
        lambda: _replace_pile(_yukon(), "t1", _t1(_yukon()) * 2),  # a card twice
        lambda: _replace_pile(_yukon(), "t1", "3X"),  # not a card
        lambda: _replace_pile(_yukon(), "t1", _t1(_yukon()).lower()),
        lambda: _replace_pile(_yukon(), "t1", _t1(_yukon()) + "4"),
        lambda: " ".join(t for t in _yukon().split() if not t.startswith("t1:")),  # pile missing
        lambda: _yukon() + " t8:",  # unknown pile
        lambda: _yukon() + " t1:",  # a pile twice
        lambda: _replace_pile(_yukon(), "t1", _t1(_yukon()) + "|"),  # face-down top card
        lambda: " ".join(t for t in _qc().split() if not t.startswith("base=")),
        lambda: _qc().replace("base=", "base=Z", 1),
        lambda: _qc().replace(" s:", " s:AC", 1),  # a fifth copy
        lambda: solrules.new_game("scotch", 1).position().replace("scotch", "scotch base=5", 1),
        lambda: _replace_pile(solrules.new_game("scotch", 1).position(), "t18", "6H|"),
        lambda: "yukon",
        lambda: _qc_token("s", lambda c: c[:-3] + "|" + c[-3:-1]),  # a face-up stock card
        lambda: _qc_token("r", lambda c: c.replace("|", "")[:-4] + "|" + c.replace("|", "")[-4:]),
        lambda: _qc_token("w", lambda c: c[:2] + "|" + c[2:]),  # a face-down waste card
        lambda: "yukon f1 f2",
    ],
)
def test_invalid_position_text_raises(make: Callable[[], str]) -> None:
    text = make()
    with pytest.raises(InvalidPositionError) as info:
        solrules.parse_position(text)
    assert isinstance(info.value, ValueError) and str(info.value)


@pytest.mark.parametrize(
    ("game", "layout", "base"),
    [("scotch", {"f1": "2H"}, None),  # a foundation must start with an Ace
     ("scotch", {"f1": "AS2S"}, None),  # colours alternate on Scotch foundations
     ("yukon", {"f1": "AS2H"}, None),  # suit on Yukon foundations
     ("quadruple-canfield", {"f1": "6C"}, "5"),  # base rank
     ("quadruple-canfield", {"f1": "5S"}, "5"),  # clubs group
     ]
)
def test_impossible_foundations_are_refused(game: str, layout: dict[str, str],
                                            base: str | None) -> None:
    with pytest.raises(InvalidPositionError):
        build(game, layout, base)
