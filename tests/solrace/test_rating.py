"""The rating arithmetic (Weng–Lin, Plackett–Luce): directions, ties, anchors, and properties
over random races."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.core.rating import PROVISIONAL, SIGMA, TAU, Rating, rate

from tests.profiles import examples


def test_the_winner_gains_what_the_loser_loses() -> None:
    a, b = rate([Rating(), Rating()], [1, 2])
    assert a.mu > 1500 > b.mu
    assert math.isclose(a.mu - 1500, 1500 - b.mu)
    assert a.sigma < SIGMA and a.races == b.races == 1


def test_a_tie_moves_nobody_and_a_shared_place_is_shared() -> None:
    a, b = rate([Rating(), Rating()], [1, 1])
    assert math.isclose(a.mu, 1500) and math.isclose(b.mu, 1500)
    x, y, z = rate([Rating(), Rating(), Rating()], [1, 1, 3])
    assert math.isclose(x.mu, y.mu) and x.mu > 1500 > z.mu


def test_an_upset_moves_more_than_the_expected_result() -> None:
    strong, weak = Rating(1800, 80, 40), Rating(1400, 80, 40)
    expected = rate([strong, weak], [1, 2])
    upset = rate([strong, weak], [2, 1])
    assert (upset[1].mu - weak.mu) > (expected[0].mu - strong.mu) > 0


def test_a_fixed_rating_never_moves() -> None:
    bot = Rating(1000, 100)
    me, still = rate([Rating(), bot], [1, 2], fixed=[False, True])
    assert still == bot and me.mu > 1500


def test_a_new_rating_stops_being_provisional_after_some_races() -> None:
    r = Rating()
    n = 0
    while r.provisional:
        r = rate([r, Rating(1500, 100)], [1 + n % 2, 2 - n % 2], fixed=[False, True])[0]
        n += 1
    assert 5 <= n <= 15 and r.sigma <= PROVISIONAL


@given(st.lists(st.tuples(st.floats(800, 2400), st.floats(40, 350), st.integers(1, 8)),
                min_size=2, max_size=8))
@settings(max_examples=examples(200), deadline=None)
def test_better_places_never_do_worse(racers: list[tuple[float, float, int]]) -> None:
    """From equal ratings, a better place never gains less; every deviation shrinks (or grows
    by at most the dynamics); the sum of changes is about zero when deviations are equal."""
    mu, sigma = racers[0][0], racers[0][1]
    places = [p for _, _, p in racers]
    before = [Rating(mu, sigma) for _ in racers]
    after = rate(before, places)
    for i in range(len(racers)):
        for j in range(len(racers)):
            if places[i] < places[j]:
                assert after[i].mu > after[j].mu - 1e-9
            if places[i] == places[j]:
                assert math.isclose(after[i].mu, after[j].mu, abs_tol=1e-6)
        assert after[i].sigma <= math.sqrt(sigma ** 2 + TAU ** 2) + 1e-9
    assert abs(sum(a.mu - mu for a in after)) < 1e-6 * len(racers) * sigma
