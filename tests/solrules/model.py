"""An independent reference model of the three games, written from the rules only (docs/rules.md).

It exists to check `solrules` differentially (same deal, same moves, same legal-move sets) and to
(re)generate the golden files in `seeds/golden/`. It is deliberately naive: plain lists, copies
instead of undo, no speed. It never imports `solrules`.

A move is a tuple ``(src, dst, count)``; ``("s", "w", 1)`` and ``("w", "s", 1)`` are the stock
actions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

RANKS = "A23456789TJQK"
SUITS = "CSHD"
GAMES = ("scotch", "quadruple-canfield", "yukon")
DECKS = {"scotch": 1, "quadruple-canfield": 4, "yukon": 1}

MoveT = tuple[str, str, int]


def rank(card: str) -> int:
    """1 for an Ace ... 13 for a King."""
    return RANKS.index(card[0]) + 1


def is_red(card: str) -> bool:
    return card[1] in "HD"


def unshuffled(decks: int) -> list[str]:
    """For each deck: suits C S H D, ranks A..K within a suit."""
    return [r + s for _ in range(decks) for s in SUITS for r in RANKS]


def ms_shuffle(cards: list[str], seed: int) -> list[str]:
    """Microsoft FreeCell LCG on the deck rearranged as AC AD AH AS 2C 2D ... (52 cards)."""
    assert len(cards) == 52
    deck = [cards[i + j] for i in range(13) for j in (0, 39, 26, 13)]
    state = seed
    for n in range(len(deck) - 1, 0, -1):
        state = (214013 * state + 2531011) % 2**31
        j = (state >> 16) % (n + 1)
        deck[n], deck[j] = deck[j], deck[n]
    return deck


def mt_shuffle(cards: list[str], seed: int) -> list[str]:
    """Python's Mersenne Twister; j = int(random() * (n + 1))."""
    deck = list(cards)
    rng = random.Random(seed)
    for n in range(len(deck) - 1, 0, -1):
        j = int(rng.random() * (n + 1))
        deck[n], deck[j] = deck[j], deck[n]
    return deck


def shuffled(game: str, seed: int) -> list[str]:
    """The shuffled list; its top (the next card dealt) is the last element."""
    decks = DECKS[game]
    cards = unshuffled(decks)
    if decks == 1 and seed < 32000:
        return ms_shuffle(cards, seed)
    return mt_shuffle(cards, seed)


def pile_ids(game: str) -> list[str]:
    if game == "scotch":
        return [f"t{i}" for i in range(1, 19)] + [f"f{i}" for i in range(1, 5)]
    if game == "yukon":
        return [f"t{i}" for i in range(1, 8)] + [f"f{i}" for i in range(1, 5)]
    return (
        [f"f{i}" for i in range(1, 17)] + ["r"] + [f"t{i}" for i in range(1, 9)] + ["s", "w"]
    )


def qc_foundation_suit(pile: str) -> str:
    """f1-f4 clubs, f5-f8 spades, f9-f12 hearts, f13-f16 diamonds."""
    return SUITS[(int(pile[1:]) - 1) // 4]


@dataclass
class Model:
    game: str
    piles: dict[str, list[str]]
    down: dict[str, int] = field(default_factory=dict)  # face-down cards at the bottom of a pile
    base: int = 0  # Quadruple Canfield base rank (1..13)

    # ----------------------------------------------------------------- helpers
    def copy(self) -> Model:
        return Model(self.game, {k: list(v) for k, v in self.piles.items()}, dict(self.down),
                     self.base)

    def tableaux(self) -> list[str]:
        return [p for p in self.piles if p.startswith("t")]

    def foundations(self) -> list[str]:
        return [p for p in self.piles if p.startswith("f")]

    def board(self, reveal: bool = False) -> dict[str, list[str | None]]:
        out: dict[str, list[str | None]] = {}
        for pid, cards in self.piles.items():
            d = len(cards) if pid == "s" else self.down.get(pid, 0)
            out[pid] = [c if reveal or i >= d else None for i, c in enumerate(cards)]
        return out

    def on_foundations(self) -> int:
        return sum(len(self.piles[f]) for f in self.foundations())

    def total(self) -> int:
        return 52 * DECKS[self.game]

    def is_won(self) -> bool:
        return self.on_foundations() == self.total()

    # ------------------------------------------------------------ acceptance
    def foundation_accepts(self, f: str, card: str) -> bool:
        pile = self.piles[f]
        if self.game == "quadruple-canfield":
            if card[1] != qc_foundation_suit(f):
                return False
            if not pile:
                return rank(card) == self.base
            return len(pile) < 13 and rank(card) == rank(pile[-1]) % 13 + 1
        if not pile:
            return rank(card) == 1
        top = pile[-1]
        if rank(card) != rank(top) + 1:
            return False
        if self.game == "scotch":
            return is_red(card) != is_red(top)
        return card[1] == top[1]  # yukon: same suit

    def tableau_accepts(self, t: str, card: str) -> bool:
        """Whether tableau pile `t` takes `card` (the bottom card of what moves)."""
        pile = self.piles[t]
        if self.game == "scotch":
            return bool(pile) and rank(pile[-1]) == rank(card) + 1
        if self.game == "yukon":
            if not pile:
                return rank(card) == 13
            top = pile[-1]
            return rank(top) == rank(card) + 1 and is_red(top) != is_red(card)
        if not pile:
            return not self.piles["r"]
        top = pile[-1]
        return rank(top) == rank(card) % 13 + 1 and is_red(top) != is_red(card)

    # ----------------------------------------------------------- generation
    def legal_moves(self) -> set[MoveT]:
        moves: set[MoveT] = set()
        ts, fs = self.tableaux(), self.foundations()
        if self.game == "quadruple-canfield":
            singles = [p for p in ("r", "w") if self.piles[p]]
            for src in singles:
                card = self.piles[src][-1]
                moves.update((src, f, 1) for f in fs if self.foundation_accepts(f, card))
                moves.update((src, t, 1) for t in ts if self.tableau_accepts(t, card))
            if self.piles["s"]:
                moves.add(("s", "w", 1))
            elif self.piles["w"]:
                moves.add(("w", "s", 1))
        for f in fs:
            if not self.piles[f] or self.game == "yukon":
                continue
            card = self.piles[f][-1]
            moves.update((f, t, 1) for t in ts if self.tableau_accepts(t, card))
        for src in ts:
            pile = self.piles[src]
            if not pile:
                continue
            moves.update((src, f, 1) for f in fs if self.foundation_accepts(f, pile[-1]))
            for count in self.movable_counts(src):
                card = pile[-count]
                for dst in ts:
                    if dst == src or not self.tableau_accepts(dst, card):
                        continue
                    if not self.piles[dst] and count == len(pile):
                        continue  # whole pile onto an empty pile
                    moves.add((src, dst, count))
        return moves

    def movable_counts(self, t: str) -> list[int]:
        pile = self.piles[t]
        if self.game == "scotch":
            return [1]
        if self.game == "yukon":
            return list(range(1, len(pile) - self.down.get(t, 0) + 1))
        counts = [1]
        k = 1
        while k < len(pile):
            upper, lower = pile[-k], pile[-k - 1]
            if rank(lower) == rank(upper) % 13 + 1 and is_red(lower) != is_red(upper):
                k += 1
                counts.append(k)
            else:
                break
        return counts

    # ------------------------------------------------------------- playing
    def apply(self, move: MoveT) -> None:
        src, dst, count = move
        p = self.piles
        if (src, dst) == ("s", "w"):
            for _ in range(min(3, len(p["s"]))):
                p["w"].append(p["s"].pop())
            return
        if (src, dst) == ("w", "s"):
            p["s"] = list(reversed(p["w"]))
            p["w"] = []
            return
        moved = p[src][-count:]
        del p[src][-count:]
        p[dst].extend(moved)
        if src == "r":
            self.down["r"] = max(len(p["r"]) - 1, 0)
        if (
            self.game == "quadruple-canfield"
            and src.startswith("t")
            and not p[src]
            and p["r"]
        ):
            p[src].append(p["r"].pop())
            self.down["r"] = max(len(p["r"]) - 1, 0)
        if self.down.get(src, 0) and self.down[src] >= len(p[src]):
            self.down[src] = len(p[src]) - 1


def deal(game: str, seed: int) -> Model:
    """The deal of `game` for `seed`, following the rules reference step by step."""
    cards = shuffled(game, seed)
    piles: dict[str, list[str]] = {pid: [] for pid in pile_ids(game)}
    down: dict[str, int] = {}
    if game == "scotch":
        for rnd in range(3):
            for i in range(1, 19 if rnd == 2 else 18):
                piles[f"t{i}"].append(cards.pop())
        return Model(game, piles, down)
    if game == "yukon":
        for i in range(2, 8):
            for k in range(i, 8):
                piles[f"t{k}"].append(cards.pop())
        for _ in range(4):
            for k in range(2, 8):
                piles[f"t{k}"].append(cards.pop())
        for k in range(1, 8):
            piles[f"t{k}"].append(cards.pop())
        down = {f"t{k}": k - 1 for k in range(1, 8)}
        return Model(game, piles, down)
    base_card = cards.pop()
    first = SUITS.index(base_card[1]) * 4 + 1
    piles[f"f{first}"].append(base_card)
    for _ in range(39):
        piles["r"].append(cards.pop())
    down["r"] = 38
    for k in range(8, 0, -1):
        piles[f"t{k}"].append(cards.pop())
    piles["s"] = cards
    model = Model(game, piles, down, base=rank(base_card))
    model.apply(("s", "w", 1))
    return model


def is_ambiguous(game: str, move: MoveT, model: Model) -> bool:
    """Moves the rules reference does not decide beyond doubt; kept out of set comparisons.

    Quadruple Canfield: a foundation holding one card moved onto an empty tableau pile is literally
    "a whole pile onto an empty pile", yet it changes the position. (Foundation to foundation is
    decided: refused, "may come back into play onto a tableau pile"; it has its own test.)
    """
    src, dst, _count = move
    return (
        game == "quadruple-canfield"
        and src.startswith("f")
        and dst.startswith("t")
        and len(model.piles[src]) == 1
        and not model.piles[dst]
    )
