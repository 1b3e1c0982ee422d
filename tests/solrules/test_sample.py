"""Samples and guesses of a position (solrules.sample): they agree with everything the player
has seen, and they depend on nothing else."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import solrules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.profiles import examples

GAMES = ("scotch", "quadruple-canfield", "yukon")


def played(game: str, seed: int, steps: int, rnd: random.Random) -> solrules.Game:
    """A position after random play, with some undos (a card turned up, then face down again
    but seen)."""
    g = solrules.new_game(game, seed)
    for _ in range(steps):
        moves = g.legal_moves()
        if not moves:
            break
        if g.move_stack and rnd.random() < 0.1:
            g.pop()
        else:
            g.push(rnd.choice(moves))
    return g


def cards(g: solrules.Game) -> Counter[str]:
    return Counter(c for pile in g.pile_ids for c in g.cards(pile))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GAMES), st.integers(0, 2**64 - 1), st.integers(0, 80),
       st.integers(0, 2**32))
def test_a_sample_shows_what_the_player_saw_and_nothing_else(
    game: str, seed: int, steps: int, r: int
) -> None:
    real = played(game, seed, steps, random.Random(r))
    sample = solrules.sample_unseen(real, random.Random(r))
    assert sample.board() == real.board()  # every face-up card in place
    assert sample.seen == real.seen and sample.face_up() == real.face_up()
    assert cards(sample) == cards(real)  # no card lost or duplicated
    # Seen face-down cards keep their place (physical card and all); only never-seen ones move.
    for p, (mine, theirs) in enumerate(zip(real._piles, sample._piles, strict=True)):
        for i in range(real._down[p]):
            if real.seen >> mine[i] & 1:
                assert theirs[i] == mine[i]
    # A position the player cannot tell from ``real`` gives the very same sample.
    twin = solrules.sample_unseen(real, random.Random(r + 1))
    assert solrules.sample_unseen(twin, random.Random(7)).position() == \
        solrules.sample_unseen(real, random.Random(7)).position()


def test_samples_do_move_unseen_cards() -> None:
    real = solrules.new_game("yukon", 11)
    positions = {solrules.sample_unseen(real, random.Random(i)).position() for i in range(20)}
    assert len(positions) == 20  # 21 face-down cards: the samples differ


def test_a_sample_keeps_a_card_seen_then_turned_back() -> None:
    g = solrules.new_game("yukon", 3)
    # Find a move that turns a card up, then take it back: the card is face down but seen.
    for move in g.legal_moves():
        before = g.seen
        g.push(move)
        if g.seen != before:
            turned = g.seen & ~before
            g.pop()
            break
        g.pop()
    else:
        pytest.skip("no move turns a card up in this deal")
    assert turned and not g.face_up() & turned
    pos = [(pid, i) for pid in g.pile_ids for i, c in enumerate(g._piles[g._index[pid]])
           if turned >> c & 1]
    for k in range(10):
        s = solrules.sample_unseen(g, random.Random(k))
        assert [(pid, i) for pid in s.pile_ids for i, c in enumerate(s._piles[s._index[pid]])
                if turned >> c & 1] == pos


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GAMES), st.integers(0, 2**64 - 1), st.integers(0, 80),
       st.integers(0, 2**32))
def test_a_guess_from_a_board_agrees_with_it(game: str, seed: int, steps: int, r: int) -> None:
    real = played(game, seed, steps, random.Random(r))
    board = real.board()
    guess = solrules.guess_game(board, random.Random(r))
    assert guess.board() == board
    assert cards(guess) == cards(real)
    assert sorted(m.text() for m in guess.legal_moves()) == \
        sorted(m.text() for m in real.legal_moves())


def test_a_guess_needs_a_board_that_can_be() -> None:
    board = solrules.new_game("yukon", 1).board()
    bad = {"game": "yukon", "piles": [dict(p) for p in board["piles"]]}
    bad["piles"][0] = {"pile": bad["piles"][0]["pile"],
                       "cards": bad["piles"][0]["cards"] + ["AS", "AS"]}
    with pytest.raises(solrules.InvalidPositionError):
        solrules.guess_game(bad, random.Random(1))
    with pytest.raises(solrules.InvalidPositionError):
        solrules.guess_game({"game": "chess", "piles": []}, random.Random(1))
    qc = solrules.new_game("quadruple-canfield", 5).board()
    assert qc["base"] and solrules.guess_game(qc, random.Random(2)).board() == qc


@pytest.mark.parametrize("game", GAMES)
def test_best_guess_is_a_legal_move(game: str) -> None:
    rnd = random.Random(5)
    for seed in range(8):
        g = played(game, seed, 30, rnd)
        move = solrules.best_guess(g)
        assert move is None or move in g.legal_by_text()
        if not g.legal_moves():
            assert move is None
