"""Seeded shuffles, compatible with PySolFC game numbers.

The only module of :mod:`solrules` that draws random numbers, and only from ``random.Random(seed)``,
whose ``random()`` sequence Python guarantees for an integer seed. The shuffle itself is written
out here (not ``random.shuffle``, whose algorithm is not guaranteed across Python versions).
"""

from __future__ import annotations

import random

MAX_SEED = 2**64
#: Below this seed, 52-card games use the Microsoft FreeCell generator (as PySolFC does).
MS_SEED_LIMIT = 32000


def check_seed(seed: int) -> int:
    """Return ``seed`` if it is a valid deal number; :exc:`ValueError` otherwise."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, not {seed!r}")
    if not 0 <= seed < MAX_SEED:
        raise ValueError(f"seed must be between 0 and 2**64 - 1, not {seed}")
    return seed


def shuffled_cards(decks: int, seed: int) -> list[int]:
    """The shuffled cards of ``decks`` decks for ``seed``: a pile whose top is the **last** element.

    Unshuffled order: per deck, suits C S H D, ranks A..K. Seeds below 32000 with one deck use the
    Microsoft FreeCell LCG on the deck rearranged A♣ A♦ A♥ A♠ 2♣ …; every other deal uses the
    Mersenne Twister of ``random.Random(seed)``.
    """
    check_seed(seed)
    cards = list(range(52 * decks))
    if decks == 1 and seed < MS_SEED_LIMIT:
        # Rank by rank, suits in the order clubs, diamonds, hearts, spades.
        cards = [suit * 13 + rank for rank in range(13) for suit in (0, 3, 2, 1)]
        state = seed
        for n in range(len(cards) - 1, 0, -1):
            state = (214013 * state + 2531011) % 2**31
            j = (state >> 16) % (n + 1)
            cards[n], cards[j] = cards[j], cards[n]
    else:
        rng = random.Random(seed)
        for n in range(len(cards) - 1, 0, -1):
            j = int(rng.random() * (n + 1))
            cards[n], cards[j] = cards[j], cards[n]
    return cards
