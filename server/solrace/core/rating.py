"""Ratings: Weng–Lin's Bayesian approximation with the Plackett–Luce model.

Why this model: a race has any number of racers, and its result is an order (with shared
places), not a set of pairwise games. Plackett–Luce rates that order directly, in one update
for everyone, and handles ties; it is the model of the ``openskill`` package (Weng and Lin, *A
Bayesian Approximation Method for Online Ranking*, JMLR 2011, algorithm 4). Glicko-2 applied
to every pair of a race of 8 would count one race as 28 games between correlated results.

A rating is a normal belief about a player's strength: ``mu`` ± ``sigma``. New players start
at 1500 ± 350 (the scale players know from Elo and Glicko), ``beta`` = 175 is the spread of one
race's performance around the strength, and ``tau`` = 3.5 is added to ``sigma`` before each race
so that a rating never freezes. Pure arithmetic: no I/O.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

MU = 1500.0
SIGMA = 350.0
BETA = SIGMA / 2
TAU = SIGMA / 100
KAPPA = 0.0001
#: A rating is provisional (shown with "?") while its deviation is above this.
PROVISIONAL = 230.0


@dataclass(frozen=True, slots=True)
class Rating:
    """A belief about a player's strength in one game (``races``: rated races so far)."""

    mu: float = MU
    sigma: float = SIGMA
    races: int = 0

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL

    @property
    def shown(self) -> int:
        """The rating as the pages show it."""
        return round(self.mu)

    def as_dict(self) -> dict[str, object]:
        return {"rating": self.shown, "deviation": round(self.sigma),
                "provisional": self.provisional, "races": self.races}


def rate(ratings: list[Rating], places: list[int], fixed: list[bool] | None = None,
         beta: float = BETA, tau: float = TAU) -> list[Rating]:
    """Everyone's rating after one race in which racer ``i`` (rated ``ratings[i]``) took place
    ``places[i]`` (1 is best; equal places are ties). A racer marked ``fixed`` (a house bot,
    whose rating is its level's) counts in everyone else's update but keeps his own.

    Ties: racers who share a place are taken to have finished in every order among
    themselves, each order as likely: the update is the Plackett–Luce update averaged over
    those orders (worked out over the subsets of each tied group, not the orders). So a
    shared first place is worth what first, second and third are worth on average, never
    less than the place after it. (openskill divides each tied group's terms by its size
    instead, which can rate a shared first place below the second place.)

    With fewer than two racers nothing changes."""
    n = len(ratings)
    if n != len(places):
        raise ValueError("one place per rating")
    fixed = fixed or [False] * n
    if n < 2:
        return list(ratings)
    # The dynamics: a little uncertainty is added before every race, except to a fixed rating.
    sigma2 = [r.sigma ** 2 + (0.0 if f else tau ** 2) for r, f in zip(ratings, fixed, strict=True)]
    c = math.sqrt(sum(s + beta ** 2 for s in sigma2))
    top = max(r.mu for r in ratings)  # exp() of differences only: no overflow on any scale
    strength = [math.exp((r.mu - top) / c) for r in ratings]
    order = sorted(set(places))
    groups = [[i for i in range(n) if places[i] == p] for p in order]
    below = [[i for g in groups[k + 1:] for i in g] for k in range(len(groups))]
    out = []
    for i, r in enumerate(ratings):
        if fixed[i]:
            out.append(Rating(r.mu, r.sigma, r.races))
            continue
        omega = delta = 0.0
        for k, group in enumerate(groups):
            if places[group[0]] > places[i]:
                break
            m = len(group)
            rest = sum(strength[j] for j in below[k])
            mine = i in group
            # Every stage of the group at or above i: the set U of the group's racers placed
            # before it, with the chance that exactly U came first (1 / C(m, |U|)).
            others = [j for j in group if j != i] if mine else group
            for t in range(m if not mine else len(others) + 1):
                weight = 1 / math.comb(m, t)
                for chosen in itertools.combinations(others, t):
                    left = sum(strength[j] for j in group) - sum(strength[j] for j in chosen)
                    p = strength[i] / (left + rest)
                    # i is next with chance 1 / (m - t) (if he is still in), else someone else.
                    omega += weight * ((1 / (m - t) if mine else 0.0) - p)
                    delta += weight * p * (1 - p)
        s2 = sigma2[i]
        gamma = math.sqrt(s2) / c
        mu = r.mu + s2 / c * omega
        shrink = max(1 - s2 / c ** 2 * delta * gamma, KAPPA)
        out.append(Rating(mu, math.sqrt(s2 * shrink), r.races + 1))
    return out
