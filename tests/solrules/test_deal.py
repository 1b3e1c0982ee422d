"""Deals: golden files, the pysol-cards cross-check, and each deal's structure checked by hand."""

from __future__ import annotations

from collections import Counter

import pytest
import solrules
from hypothesis import given, settings
from hypothesis import strategies as st
from pysol_cards.cards import CardRenderer, createCards
from pysol_cards.deal_game import Game as PysolGame
from pysol_cards.random import MTRandom
from pysol_cards.random_base import RandomBase

from tests.profiles import examples
from tests.solrules import make_golden
from tests.solrules.helpers import assert_deck_complete, golden, piles
from tests.solrules.model import SUITS, rank, unshuffled

GAMES = ("scotch", "quadruple-canfield", "yukon")
GOLDEN_SEEDS = [int(s) for s in golden("scotch")["deals"]]
# pysol-cards uses the Microsoft generator up to 32000 inclusive (we switch at 32000): skip it.
PYSOL_SEEDS = [1, 2, 617, 11982, 24000, 31998, 31999, 32001, 32002, 99999, 123456789,
               2**31 + 7, 2**32 + 5, 2**63, 2**64 - 1]


def test_games_and_titles() -> None:
    assert solrules.GAMES == GAMES
    assert set(solrules.TITLES) == set(GAMES)
    assert solrules.TITLES["scotch"] == "Scotch Patience"
    assert all(isinstance(t, str) and t for t in solrules.TITLES.values())


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", GOLDEN_SEEDS)
def test_deal_matches_golden(game: str, seed: int) -> None:
    record = golden(game)["deals"][str(seed)]
    g = solrules.new_game(game, seed)
    assert (g.name, g.seed) == (game, seed)
    assert piles(g, reveal=True) == record["piles"]
    hidden = piles(g)
    for pid, cards in hidden.items():
        n = record["face_down"][pid]
        assert cards[:n] == [None] * n, pid
        assert cards[n:] == record["piles"][pid][n:], pid
    assert g.move_stack == []
    if game == "quadruple-canfield":
        assert g.progress() == (1, 208)
    else:
        assert g.progress() == (0, 52)


@pytest.mark.parametrize("game", GAMES)
def test_golden_files_are_current(game: str) -> None:
    """The files are what the reference model writes (run make_golden after changing it)."""
    assert golden(game) == make_golden.golden(game)


def pysol_columns(game_id: str, seed: int) -> list[list[str]]:
    text = PysolGame(game_id, seed, RandomBase.DEALS_PYSOLFC).calc_deal_string(
        seed, CardRenderer(True))
    return [line.split() for line in text.strip().splitlines()]


@pytest.mark.parametrize("seed", PYSOL_SEEDS)
def test_scotch_matches_pysol_cards_fan(seed: int) -> None:
    columns = pysol_columns("fan", seed)
    board = piles(solrules.new_game("scotch", seed))
    assert [board[f"t{i}"] for i in range(1, 19)] == columns


def yukon_as_pysol(seed: int) -> list[list[str]]:
    g = solrules.new_game("yukon", seed)
    shown, full = piles(g), piles(g, reveal=True)
    return [[f"<{c}>" if s is None else str(c) for c, s in zip(full[f"t{i}"], shown[f"t{i}"],
                                                                 strict=True)]
            for i in range(1, 8)]


@pytest.mark.parametrize("seed", PYSOL_SEEDS)
def test_yukon_matches_pysol_cards(seed: int) -> None:
    assert yukon_as_pysol(seed) == pysol_columns("yukon", seed)


@settings(max_examples=examples(100), deadline=None)
@given(seed=st.one_of(st.integers(1, 31999), st.integers(32001, 2**64 - 1)))
def test_random_seeds_match_pysol_cards(seed: int) -> None:
    board = piles(solrules.new_game("scotch", seed))
    assert [board[f"t{i}"] for i in range(1, 19)] == pysol_columns("fan", seed)
    assert yukon_as_pysol(seed) == pysol_columns("yukon", seed)


def test_seed_32000_uses_mersenne_twister() -> None:
    """32000 is the first MT seed for us (pysol-cards differs there, by its own off-by-one)."""
    board = piles(solrules.new_game("scotch", 32000))
    ours = [board[f"t{i}"] for i in range(1, 19)]
    assert ours != pysol_columns("fan", 32000)  # pysol-cards: Microsoft generator at 32000
    cards = MTRandom(32000).shuffle(createCards(1))  # pysol-cards' own MT path, forced
    renderer = CardRenderer(True)
    top_first = [renderer.to_s(c) for c in reversed(cards)]
    fans: list[list[str]] = [[] for _ in range(18)]
    for i, card in enumerate(top_first):
        fans[i % 17 if i < 51 else 17].append(card)
    assert ours == fans


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [0, 1, 31999, 32000, 2**64 - 1])
def test_deal_is_deterministic_and_complete(game: str, seed: int) -> None:
    a, b = solrules.new_game(game, seed), solrules.new_game(game, seed)
    assert a.position() == b.position()
    assert piles(a, reveal=True) == piles(b, reveal=True)
    assert_deck_complete(a)
    assert not a.is_won()


@pytest.mark.parametrize("game", GAMES)
def test_different_seeds_different_deals(game: str) -> None:
    deals = {solrules.new_game(game, s).position().split(" ", 1)[1] for s in range(0, 40)}
    assert len(deals) == 40


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_bad_seed_is_refused(game: str, seed: int) -> None:
    with pytest.raises(ValueError):
        solrules.new_game(game, seed)


@pytest.mark.parametrize("seed", ["1", 1.0, None])
def test_non_integer_seed_is_refused(seed: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        solrules.new_game("scotch", seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "klondike", "Scotch", "quadruple_canfield"])
def test_unknown_game_is_refused(name: str) -> None:
    with pytest.raises(ValueError):
        solrules.new_game(name, 1)


# --------------------------------------------------------------- structure, checked by hand

@pytest.mark.parametrize("seed", [0, 5, 31999, 32000, 2**64 - 1])
def test_scotch_deal_structure(seed: int) -> None:
    g = solrules.new_game("scotch", seed)
    shown = piles(g)
    assert sorted(shown) == sorted([f"t{i}" for i in range(1, 19)] + [f"f{i}" for i in range(1, 5)])
    assert [len(shown[f"t{i}"]) for i in range(1, 19)] == [3] * 17 + [1]
    assert all(shown[f"f{i}"] == [] for i in range(1, 5))
    assert None not in [c for cs in shown.values() for c in cs]  # all face up
    assert shown == piles(g, reveal=True)
    assert g.progress() == (0, 52)


@pytest.mark.parametrize("seed", [0, 5, 31999, 32000, 2**64 - 1])
def test_yukon_deal_structure(seed: int) -> None:
    g = solrules.new_game("yukon", seed)
    shown, full = piles(g), piles(g, reveal=True)
    assert sorted(shown) == sorted([f"t{i}" for i in range(1, 8)] + [f"f{i}" for i in range(1, 5)])
    for k in range(1, 8):
        column = shown[f"t{k}"]
        down = k - 1
        up = 1 if k == 1 else 5
        assert column[:down] == [None] * down
        assert None not in column[down:] and len(column) == down + up
        assert column[down:] == full[f"t{k}"][down:]
    assert sum(c is None for cs in shown.values() for c in cs) == 21
    assert sum(c is not None for cs in shown.values() for c in cs) == 31
    assert all(shown[f"f{i}"] == [] for i in range(1, 5))


@pytest.mark.parametrize("seed", [0, 5, 31999, 32000, 2**64 - 1])
def test_quadruple_canfield_deal_structure(seed: int) -> None:
    g = solrules.new_game("quadruple-canfield", seed)
    shown, full = piles(g), piles(g, reveal=True)
    expected_ids = [f"f{i}" for i in range(1, 17)] + ["r", "s", "w"] + [f"t{i}" for i in
                                                                          range(1, 9)]
    assert sorted(shown) == sorted(expected_ids)
    filled = [f for f in (f"f{i}" for i in range(1, 17)) if full[f]]
    assert len(filled) == 1
    base_card = str(full[filled[0]][0])
    assert len(full[filled[0]]) == 1
    assert filled[0] == f"f{SUITS.index(base_card[1]) * 4 + 1}"  # first foundation of its suit
    assert f"base={base_card[0]}" in g.position().split()
    assert len(full["r"]) == 39
    assert shown["r"][:38] == [None] * 38 and shown["r"][38] == full["r"][38]
    for k in range(1, 9):
        assert len(shown[f"t{k}"]) == 1 and shown[f"t{k}"] == full[f"t{k}"]
    assert len(shown["w"]) == 3 and shown["w"] == full["w"]
    assert shown["s"] == [None] * (208 - 1 - 39 - 8 - 3)
    counts = Counter(c for cs in full.values() for c in cs)
    assert set(counts.values()) == {4} and len(counts) == 52
    assert g.progress() == (1, 208)


def test_quadruple_canfield_deal_order_by_hand() -> None:
    """Reconstruct the shuffled list from the deal and check it is a permutation taken in the
    documented order: base, reserve (bottom first), t8..t1, stock, then 3 cards to the waste."""
    g = solrules.new_game("quadruple-canfield", 77)
    full = piles(g, reveal=True)
    base = next(str(cs[0]) for f, cs in full.items() if f.startswith("f") and cs)
    waste = [str(c) for c in full["w"]]
    stock = [str(c) for c in full["s"]]
    dealt = [base] + [str(c) for c in full["r"]] + [str(full[f"t{k}"][0]) for k in range(8, 0, -1)]
    # dealt from the top (end) of the list: the list is stock + waste reversed + dealt reversed
    as_list = stock + waste[::-1] + dealt[::-1]
    import random  # the documented MT shuffle, rewritten here in three lines

    cards = unshuffled(4)
    rng = random.Random(77)
    for n in range(len(cards) - 1, 0, -1):
        j = int(rng.random() * (n + 1))
        cards[n], cards[j] = cards[j], cards[n]
    assert as_list == cards
    assert rank(base) == "A23456789TJQK".index(g.position().split()[1][5:]) + 1
