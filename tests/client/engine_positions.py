"""Random positions of each game, most cards home, for tests/client/test_engine.py.

Play seldom gets far: random play sticks early, and even a winning line of Quadruple Canfield
meets an auto-move (``safe``) about once, at its very end. These positions are what the end of
a game looks like, so that the auto-move rules are judged on thousands of them. Half are
*unplayed*: every card home, then foundation tops taken back onto the tableau where they fit
(as the last moves of a game put them home: the cards out lie in runs, which is when Quadruple
Canfield's rule lets a card go home); half *scattered*: foundations of random heights, the
other cards dealt at random, some piles built in sequence. They need not be reachable from a
deal, only valid for ``solrules.parse_position``.
"""

from __future__ import annotations

import random

import solrules
from solrules.cards import RANKS, SUITS

RED = {"C": 0, "S": 0, "H": 1, "D": 1}
TABLEAU = {"scotch": 18, "yukon": 7, "quadruple-canfield": 8}


def _heights(count: int, rng: random.Random) -> list[int]:
    """Foundation heights: often the end of a game (a few cards out), else anything."""
    if rng.random() < 0.6:
        heights = [13] * count
        for _ in range(rng.randint(1, rng.choice((3, 6, 12, 30)))):
            f = rng.choice([f for f in range(count) if heights[f]])
            heights[f] -= 1
        return heights
    low = rng.randrange(14)
    return [rng.randint(low, 13) for _ in range(count)]


def _foundations(name: str, rng: random.Random, pool: list[str], base: int,
                 heights: list[int]) -> list[list[str]]:
    """Foundations built by the game's rule, taking their cards from ``pool``."""
    if name == "quadruple-canfield":
        piles = [[RANKS[(base + i) % 13] + SUITS[f // 4] for i in range(h)]
                 for f, h in enumerate(heights)]
    elif name == "yukon":
        piles = [[rank + suit for rank in RANKS[:h]]
                 for suit, h in zip(rng.sample(SUITS, 4), heights, strict=True)]
    else:  # scotch: alternate colours from any Ace, suit free
        piles = []
        left = set(pool)
        reds = [0, 0, 1, 1]
        rng.shuffle(reds)
        for h, red in zip(heights, reds, strict=True):
            pile: list[str] = []
            for i in range(h):
                want = red ^ (i & 1)
                choices = sorted(c for c in left if c[0] == RANKS[i] and RED[c[1]] == want)
                if not choices:
                    break
                pile.append(rng.choice(choices))
                left.discard(pile[-1])
            piles.append(pile)
    for pile in piles:
        for card in pile:
            pool.remove(card)
    return piles


def _fits(name: str, card: str, top: str) -> bool:
    """Does ``card`` build on ``top`` in the game's tableau?"""
    below = RANKS.index(top[0]) - 1
    if name == "quadruple-canfield":
        below %= 13
    if RANKS.index(card[0]) != below:
        return False
    return name == "scotch" or RED[card[1]] != RED[top[1]]


def _unplay(name: str, rng: random.Random, foundations: list[list[str]],
            tableau: list[list[str]], spare: list[str]) -> None:
    """Take foundation tops back onto the tableau where they fit (else a space, else ``spare``)."""
    for _ in range(rng.randint(1, rng.choice((4, 10, 20, 40)))):
        full = [f for f in foundations if f]
        if not full:
            return
        card = rng.choice(full).pop()
        fits = [t for t in tableau if t and _fits(name, card, t[-1])]
        spaces = [t for t in tableau if not t]
        roll = rng.random()
        if fits and roll < 0.6:
            rng.choice(fits).append(card)
        elif spaces and roll < 0.75:
            rng.choice(spaces).append(card)
        else:
            spare.append(card)


def _scatter(name: str, rng: random.Random, tableau: list[list[str]], pool: list[str]) -> None:
    """Deal ``pool`` over the tableau, some piles built in sequence first (so that runs move)."""
    rng.shuffle(pool)
    for pile in tableau:
        if pool and rng.random() < 0.4:
            pile.append(pool.pop())
            while rng.random() < 0.8:
                card = next((c for c in pool if _fits(name, c, pile[-1])), None)
                if card is None:
                    break
                pool.remove(card)
                pile.append(card)
    for card in pool:
        rng.choice(tableau).insert(0, card)
    pool.clear()


def canfield_endgame(rng: random.Random) -> str:
    """The last cards of a Quadruple Canfield game with the reserve still out: tops of one
    colour's foundations, in one of its suits the card under some of them too (none of these
    could ever be needed by another: colour and rank parity agree), and now and then a top of
    the other colour, which blocks them. Nine cards out at least — a reserve card and eight
    tableau piles — so whether a card may go home depends on where it lies, the part of the
    rule that other positions seldom reach."""
    base = rng.randrange(13)
    heights = [13] * 16
    col = rng.randrange(2)
    own, other = rng.sample((2 * col, 2 * col + 1), 2)
    out: list[str] = []

    def take(suit: int, count: int) -> None:
        for f in rng.sample(range(suit * 4, suit * 4 + 4), count):
            heights[f] -= 1
            out.append(RANKS[(base + heights[f]) % 13] + SUITS[suit])

    mine = rng.randint(1, 4)
    take(own, mine)
    take(other, 4)
    for f in rng.sample(range(other * 4, other * 4 + 4), rng.randint(max(1, 5 - mine), 4)):
        heights[f] -= 1
        out.append(RANKS[(base + heights[f]) % 13] + SUITS[other])
    if rng.random() < 0.3:
        take(rng.choice((2 - 2 * col, 3 - 2 * col)), 1)
    rng.shuffle(out)
    reserve = [out.pop() for _ in range(rng.randint(1, min(3, len(out) - 8)))]
    tableau = [[out.pop()] for _ in range(8)]
    waste = [out.pop() for _ in range(rng.randint(0, len(out) // 2))]
    for card in out:
        rng.choice(tableau).append(card)
    fields = ["quadruple-canfield", f"base={RANKS[base]}"]
    fields += [f"f{f + 1}:" + "".join(RANKS[(base + i) % 13] + SUITS[f // 4] for i in range(h))
               for f, h in enumerate(heights)]
    fields += ["r:" + "".join(reserve[:-1]) + "|" + reserve[-1], "s:", "w:" + "".join(waste)]
    fields += [f"t{i + 1}:" + "".join(pile) for i, pile in enumerate(tableau)]
    return solrules.parse_position(" ".join(fields)).position()


def random_position(name: str, rng: random.Random) -> str:
    """A position text of ``name``, as solrules writes it, valid for ``parse_position``."""
    if name == "quadruple-canfield" and rng.random() < 0.3:
        return canfield_endgame(rng)
    decks = 4 if name == "quadruple-canfield" else 1
    nf = 16 if name == "quadruple-canfield" else 4
    pool = [rank + suit for suit in SUITS for rank in RANKS] * decks
    base = rng.randrange(13) if name == "quadruple-canfield" else 0
    tableau: list[list[str]] = [[] for _ in range(TABLEAU[name])]
    unplayed = rng.random() < 0.5
    foundations = _foundations(name, rng, pool, base, [13] * nf if unplayed else _heights(nf, rng))
    if unplayed:
        _unplay(name, rng, foundations, tableau, pool)
    rng.shuffle(pool)
    fields = [name] + [f"f{i + 1}:{''.join(p)}" for i, p in enumerate(foundations)]
    reserve: list[str] = []
    if name == "quadruple-canfield":
        fields.insert(1, f"base={RANKS[base]}")
        reserve = [pool.pop() for _ in range(min(len(pool), rng.choice((0, 1, 2, 3, 5))))]
        stock = [pool.pop() for _ in range(rng.randrange(len(pool) // 2 + 1))]
        waste = [pool.pop() for _ in range(rng.randrange(len(pool) // 2 + 1))]
    if unplayed:
        for card in pool:
            rng.choice(tableau).insert(0, card)
    else:
        _scatter(name, rng, tableau, pool)
    if name == "quadruple-canfield":
        # A space is refilled from the reserve at once: none while the reserve has cards.
        for pile in tableau:
            if reserve and not pile:
                pile.append(reserve.pop(0))
        fields.append("r:" + ("".join(reserve[:-1]) + "|" + reserve[-1] if reserve else ""))
        fields.append("s:" + "".join(stock) + ("|" if stock else ""))
        fields.append("w:" + "".join(waste))
    for i, pile in enumerate(tableau):
        down = rng.randrange(len(pile)) if name == "yukon" and pile else 0
        text = "".join(pile)
        fields.append(f"t{i + 1}:" + (text[:2 * down] + "|" + text[2 * down:] if down else text))
    # solrules writes it back as it reads it (and raises if the generator is wrong).
    return solrules.parse_position(" ".join(fields)).position()
