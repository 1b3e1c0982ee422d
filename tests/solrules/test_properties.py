"""Properties over random legal play in all three games, checked against the reference model.

Along each random line: the legal-move set equals the model's, every listed move passes
`is_legal` and `push` never raises for it, the board (revealed and not) equals the model's, every
card is present once per deck, `board()` never reveals a face-down card, position text round-trips,
and `pop` restores the exact position text all the way back to the deal. The face-up and seen
bitmasks agree with the board, `seen` never shrinks (not even on `pop`), and a board masked by a
set of cards shows exactly the face-up cards of that set.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import solrules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.profiles import examples
from tests.solrules.helpers import as_tuple, assert_deck_complete, model_of, piles
from tests.solrules.model import Model, MoveT, deal, is_ambiguous

GAMES = ("scotch", "quadruple-canfield", "yukon")
STEPS = {"scotch": 60, "quadruple-canfield": 160, "yukon": 70}
EXAMPLES = {"scotch": 80, "quadruple-canfield": 40, "yukon": 80}
SEEDS = st.one_of(st.integers(0, 40000), st.integers(0, 2**64 - 1))


def comparable(game: str, moves: set[MoveT], model: Model) -> set[MoveT]:
    return {m for m in moves if not is_ambiguous(game, m, model)}


def choose(game: solrules.Game, moves: list[solrules.Move], rnd: random.Random) -> solrules.Move:
    """Random, but leaning towards moves that make progress so that deep positions are reached
    (emptied piles, refilled spaces, flipped cards, foundations built up and taken back)."""
    if rnd.random() < 0.6:
        sizes = {p: len(cs) for p, cs in piles(game).items()}
        keen = [m for m in moves if m.dst.startswith("f") or m.src == "r"
                or m.count == sizes[m.src]]
        if keen:
            return rnd.choice(keen)
    return rnd.choice(moves)


def check_masks(g: solrules.Game, rnd: random.Random) -> None:
    """``face_up()`` is the set of cards shown by ``board()``, every one of them is ``seen``,
    and ``board(mask=...)`` shows exactly the face-up cards in the mask."""
    shown = g.board()["piles"]
    up = 0
    for pile, entry in zip(g._piles, shown, strict=True):
        for card, text in zip(pile, entry["cards"], strict=True):
            if text is not None:
                up |= 1 << card
    assert g.face_up() == up
    assert g.seen & up == up
    mask = up & rnd.getrandbits(52 * g.decks)
    masked = g.board(mask=mask)["piles"]
    for pile, entry in zip(g._piles, masked, strict=True):
        expect = [solrules.card_text(c) if mask >> c & 1 else None for c in pile]
        assert entry["cards"] == expect
    assert g.board(mask=g.seen) == g.board()


def check_position(g: solrules.Game, model: Model) -> None:
    full, shown = piles(g, reveal=True), piles(g)
    assert full == model.board(reveal=True)
    assert shown == model.board()  # face-down cards (and the stock) are hidden, nothing else
    assert_deck_complete(g)
    assert g.progress() == (model.on_foundations(), model.total())
    assert g.is_won() == model.is_won()
    text = g.position()
    again = solrules.parse_position(text)
    assert again.position() == text
    assert again.seed is None and again.name == g.name
    assert piles(again, reveal=True) == full and piles(again) == shown
    assert sorted(map(as_tuple, again.legal_moves())) == sorted(map(as_tuple, g.legal_moves()))


def exhaustive_check(g: solrules.Game, legal: set[MoveT]) -> None:
    """is_legal over every syntactically possible (src, dst, count) agrees with legal_moves()."""
    sizes = {p: len(cs) for p, cs in piles(g).items()}
    for src, size in sizes.items():
        for dst in sizes:
            for count in range(1, max(size, 1) + 2):  # counts < 1: test_move.py
                move = solrules.Move(src=src, dst=dst, count=count)
                ok = g.is_legal(move)
                assert ok == ((src, dst, count) in legal), move
                reason = g.refusal(move)
                if ok:
                    assert reason is None
                else:
                    assert isinstance(reason, str) and reason.strip(), move


def check_legal_move(g: solrules.Game, listed: list[MoveT], rnd: random.Random) -> None:
    """legal_move(text), one move checked alone on a fresh copy (no list worked out), agrees
    with the list: every listed text, and texts that are not listed or not well written."""
    fresh = g.copy()
    texts = [solrules.Move(*m).text() for m in listed]
    ids = list(piles(g))
    others = [f"{rnd.choice(ids)}>{rnd.choice(ids)}" + rnd.choice(["", "/2", "/3", "/13"])
              for _ in range(6)] + ["t1>f1/1", "x>y", " t1>f1", "t99>f1", ""]
    for text in texts + others:
        found = fresh.legal_move(text)
        assert (found is not None) == (text in texts), text
        if found is not None:
            assert found.text() == text
    assert fresh.legal_move("t1>f1/1") is None


def play(g: solrules.Game, model: Model, rnd: random.Random, steps: int) -> None:
    game_name = g.name
    start = g.position()
    history = [start]
    seen = g.seen
    for step in range(steps):
        check_position(g, model)
        check_masks(g, rnd)
        assert g.seen & seen == seen, "seen never shrinks"
        seen = g.seen
        moves = g.legal_moves()
        listed = [as_tuple(m) for m in moves]
        assert len(set(listed)) == len(listed), "duplicate moves listed"
        assert comparable(game_name, set(listed), model) == comparable(
            game_name, model.legal_moves(), model)
        for m in moves:
            assert g.is_legal(m) and g.refusal(m) is None, m
        # Its own generator: draws from Hypothesis' would make every example larger.
        check_legal_move(g, listed, random.Random(step))
        if step % 25 == 0:
            exhaustive_check(g, set(listed))
        if not moves:
            break
        move = choose(g, moves, rnd)
        if step == steps // 2:
            twin = g.copy()
            assert twin.position() == g.position() and twin.move_stack == g.move_stack
            twin.push(move)
            assert twin.position() != g.position()
            assert len(twin.move_stack) == len(g.move_stack) + 1
        g.push(move)  # never raises for a listed move
        model.apply(as_tuple(move))
        history.append(g.position())
        assert g.move_stack[-1] == move
    check_position(g, model)
    assert g.seen & seen == seen
    seen = g.seen
    while g.move_stack:
        last = g.move_stack[-1]
        assert g.pop() == last
        history.pop()
        assert g.position() == history[-1]
        assert g.seen == seen  # taking a move back forgets nothing
        check_masks(g, rnd)
        # legal_moves() after pop may come from the game's memo: it must be what a fresh game
        # in the same position lists.
        assert g.legal_moves() == solrules.parse_position(history[-1]).legal_moves()
    assert history == [start]
    with pytest.raises(IndexError):
        g.pop()


def _property(game_name: str) -> Callable[..., None]:
    @settings(max_examples=examples(EXAMPLES[game_name]), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=SEEDS, rnd=st.randoms(use_true_random=False))
    def test(seed: int, rnd: random.Random) -> None:
        play(solrules.new_game(game_name, seed), deal(game_name, seed), rnd, STEPS[game_name])

    return test


test_random_play_scotch = _property("scotch")
test_random_play_quadruple_canfield = _property("quadruple-canfield")
test_random_play_yukon = _property("yukon")


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, rnd=st.randoms(use_true_random=False))
def test_legal_moves_after_push_and_pop_match_a_fresh_game(
    game: str, seed: int, rnd: random.Random
) -> None:
    """Moves taken back at random depths, with legal_moves() asked or not in between: the list
    always equals that of a game parsed from the same position (no stale memo)."""
    g = solrules.new_game(game, seed)
    for _ in range(80):
        if g.move_stack and rnd.random() < 0.4:
            g.pop()
        else:
            moves = g.legal_moves()
            if not moves:
                break
            g.push(choose(g, moves, rnd))
        if rnd.random() < 0.7:
            assert g.legal_moves() == solrules.parse_position(g.position()).legal_moves()
    assert g.copy().legal_moves() == solrules.parse_position(g.position()).legal_moves()


def short_reserve(position: str, keep: int) -> str:
    """The same Quadruple Canfield position with all but `keep` reserve cards moved under the
    stock: spaces then stay empty sooner, which random play from a deal rarely reaches."""
    tokens = position.split()
    r = next(t for t in tokens if t.startswith("r:"))[2:].replace("|", "")
    s = next(t for t in tokens if t.startswith("s:"))[2:].replace("|", "")
    cut = len(r) - 2 * keep
    reserve = r[cut:]
    if len(reserve) > 2:
        reserve = reserve[:-2] + "|" + reserve[-2:]
    stock = r[:cut] + s
    out = []
    for t in tokens:
        if t.startswith("r:"):
            t = "r:" + reserve
        elif t.startswith("s:"):
            t = "s:" + (stock + "|" if stock else "")
        out.append(t)
    return " ".join(out)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, keep=st.integers(0, 3), rnd=st.randoms(use_true_random=False))
def test_random_play_quadruple_canfield_short_reserve(seed: int, keep: int,
                                                      rnd: random.Random) -> None:
    text = short_reserve(solrules.new_game("quadruple-canfield", seed).position(), keep)
    g = solrules.parse_position(text)
    assert len(piles(g)["r"]) == keep
    play(g, model_of(g), rnd, 120)


@pytest.mark.parametrize("game", GAMES)
def test_pop_after_parse_position_restores_text(game: str) -> None:
    """A game built from position text also undoes exactly (forced effects included)."""
    rnd = random.Random(game)
    g = solrules.new_game(game, 2024)
    for _ in range(30):
        moves = g.legal_moves()
        if not moves:
            break
        g.push(choose(g, moves, rnd))
    h = solrules.parse_position(g.position())
    model = model_of(h)
    for _ in range(40):
        moves = h.legal_moves()
        if not moves:
            break
        before = h.position()
        move = choose(h, moves, rnd)
        h.push(move)
        h.pop()
        assert h.position() == before
        h.push(move)
        model.apply(as_tuple(move))
        assert piles(h, reveal=True) == model.board(reveal=True)
