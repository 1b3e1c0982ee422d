"""Scotch Patience for the solver: cards reduced to rank and colour, fans as a multiset.

In Scotch the suit of a card never matters (fans build regardless of suit, foundations by
colour), so a card is its *type* ``rank * 2 + red`` and the two cards of a type are
interchangeable. A foundation is (colour of its Ace, height); its top is implied. Every card
placed on a fan lies on a card one rank higher.

Pruning, each a proven dominance (see :func:`solrules.solve`):

- **safe home**: a card of rank r may go home when every foundation holds at least r cards
  (every card of a lower rank is home). A fan card is only ever useful as a place for a card one
  rank lower; all are home, and none is worth taking back (it could only hold a card lower
  still, and all of those are home). Such a move is played alone, and a foundation never gives
  back a card that would be safe.
- **last card of a fan**: moving the only card of a fan onto another fan is never tried. The
  empty fan is never filled again, so the move only covers the card it lands on.
- **hops**: a card c lying on a card x one rank higher that moves onto another such card only
  uncovers x. Moves touching neither fan commute with it, so in a shortest winning line it can
  be put just before the first move that touches one of the two fans: x goes home or onto a
  card one rank higher, or another card of c's rank goes onto x, or a card one rank lower goes
  onto c (c moving again would make the line longer); the last two may come from a fan or be
  given back by a foundation. That move is then legal right after the hop, so a hop is only
  tried when one of those is possible. (Until this issue the foundations were left out, which
  could cut the only winning lines: a hop that makes room for a card given back.)
- **Kings**: a King never moves but home, and never comes back, so the cards under it wait for
  it, and its foundation is complete when it goes home. A card under a King therefore belongs to
  another foundation of its colour pattern, whose King must go home after this one; when every
  way of placing these cards makes the Kings wait for each other in a circle, the position is
  lost (checked for each set of Kings still out, so once per few thousand positions).
"""

from __future__ import annotations

import itertools

from .cards import RANK_OF, RED_OF
from .core import Game

KING = 12


def _type(card: int) -> int:
    return RANK_OF[card] * 2 + RED_OF[card]


class ScotchEngine:
    """Search representation of a Scotch position (see the module docstring)."""

    #: How ``solrules.solver._search`` shares the nodes out here: best-first with a set of its
    #: own (shared with the prover, it cuts the prover's quick lines: a deal the prover wins in
    #: 1,257 nodes took 261,562) and three quarters of the nodes, the prover a quarter (close to
    #: the earlier 30 % depth-first, then best-first). No probes: on the 55 Scotch deals of the
    #: benchmark that take over 1,000 nodes, they win none more within 100,000 nodes (43 either
    #: way) and their turns replay long lines.
    probes = False
    best_first_alone = True
    best_first_weight = 3
    alone_ratio = 3

    def __init__(self, game: Game) -> None:
        self.nf = nf = game.foundations.count
        self.t0 = game._t_range.start
        piles = game._piles
        self.fans: list[list[int]] = [[_type(c) for c in piles[t]] for t in game._t_range]
        self.seg: list[bytes] = [bytes(f) for f in self.fans]
        self.h: list[int] = [len(piles[f]) for f in range(nf)]
        self.ac: list[int] = [RED_OF[piles[f][0]] if piles[f] else 0 for f in range(nf)]
        self.home = sum(self.h)
        self.total = 52 * game.decks
        # Cards on the fans not lying on a card one rank higher (kept up to date by _move).
        self.loose = sum(1 for fan in self.fans for i in range(1, len(fan))
                         if fan[i - 1] >> 1 != (fan[i] >> 1) + 1)
        ids = game.pile_ids
        self._text = {a << 8 | b: f"{ids[a]}>{ids[b]}"
                      for a in range(len(ids)) for b in range(len(ids))}
        # Kings on fans, as (fan number, height in the fan, types under it).
        self._kings = [(i, j, tuple(fan[:j])) for i, fan in enumerate(self.fans)
                       for j, t in enumerate(fan) if t >> 1 == KING]
        self._deadlock: dict[int, bool] = {}

    def won(self) -> bool:
        return self.home == self.total

    def text(self, move: int) -> str:
        return self._text[move]

    def snapshot(self) -> tuple[object, ...]:
        return (tuple(tuple(f) for f in self.fans), tuple(self.seg), tuple(self.h),
                tuple(self.ac), self.home, self.loose)

    def restore(self, snap: tuple[object, ...]) -> None:
        fans, seg, h, ac, home, loose = snap
        self.loose = loose  # type: ignore[assignment]
        self.fans = [list(f) for f in fans]  # type: ignore[attr-defined]
        self.seg = list(seg)  # type: ignore[call-overload]
        self.h = list(h)  # type: ignore[call-overload]
        self.ac = list(ac)  # type: ignore[call-overload]
        self.home = home  # type: ignore[assignment]

    def score(self) -> int:
        """Higher is closer to a win: cards home, few cards out of order on the fans, and the
        cards the foundations want next near the top of their fans."""
        buried = 0
        h, ac = self.h, self.ac
        for f in range(self.nf):
            hf = h[f]
            if hf == 0:
                buried += min(self._depth(0), self._depth(1)) % 99
            elif hf < 13:
                buried += self._depth(hf * 2 + (ac[f] ^ (hf & 1))) % 99
        return 4 * self.home - 3 * self.loose - 6 * buried

    def _depth(self, t: int) -> int:
        """Cards above the least buried card of type ``t`` on the fans (99: none there)."""
        best = 99
        for fan in self.fans:
            if t in fan:
                d = fan[::-1].index(t)
                if d < best:
                    best = d
        return best

    def key(self) -> bytes:
        h, ac = self.h, self.ac
        found = bytes(sorted([h[f] * 2 + ac[f] if h[f] else 0 for f in range(self.nf)]))
        return b"\xff".join(sorted(self.seg)) + b"\xfe" + found

    def apply(self, move: int) -> int:
        self._move(move >> 8, move & 0xFF)
        return move

    def undo(self, record: int) -> None:
        self._move(record & 0xFF, record >> 8)

    def _move(self, a: int, b: int) -> None:
        nf, t0 = self.nf, self.t0
        if a >= nf:
            fan = self.fans[a - t0]
            t = fan.pop()
            if fan and fan[-1] >> 1 != (t >> 1) + 1:
                self.loose -= 1
            self.seg[a - t0] = bytes(fan)
        else:
            hf = self.h[a] = self.h[a] - 1
            self.home -= 1
            t = hf * 2 + (self.ac[a] ^ (hf & 1))
        if b >= nf:
            fan = self.fans[b - t0]
            if fan and fan[-1] >> 1 != (t >> 1) + 1:
                self.loose += 1
            fan.append(t)
            self.seg[b - t0] = bytes(fan)
        else:
            if self.h[b] == 0:
                self.ac[b] = t & 1
            self.h[b] += 1
            self.home += 1

    def moves(self) -> list[int]:
        if self._kings and self._kings_deadlocked():
            return []
        return self._moves()

    def _moves(self) -> list[int]:
        fans, h, ac, nf, t0 = self.fans, self.h, self.ac, self.nf, self.t0
        hmin = min(h)
        # Foundation wanting each card type (the first of equal foundations).
        want: dict[int, int] = {}
        for f in range(nf):
            hf = h[f]
            if hf == 0:
                if 0 not in want:
                    want[0] = want[1] = f
            elif hf < 13:
                t = hf * 2 + (ac[f] ^ (hf & 1))
                if t not in want:
                    want[t] = f
        tops: list[list[int]] = [[] for _ in range(13)]
        for i, fan in enumerate(fans):
            if fan:
                tops[fan[-1] >> 1].append(i)
        # Ranks a foundation could give back now (the moves tried below): a hop may wait for one.
        back = [False] * 14
        for f in range(nf):
            if hmin < h[f] - 1 < KING:
                back[h[f] - 1] = True
        home_moves: list[int] = []
        scored: list[tuple[int, int]] = []
        for i, fan in enumerate(fans):
            if not fan:
                continue
            t = fan[-1]
            r = t >> 1
            src = (i + t0) << 8
            home = want.get(t)
            if home is not None:
                if r <= hmin:
                    return [src | home]
                home_moves.append(src | home)
            if len(fan) > 1 and r < KING:
                below = fan[-2]
                # Prefer moves that uncover a card that can go home, then one that can move.
                score = 0
                if below in want:
                    score = 4
                elif (below >> 1) < KING and tops[(below >> 1) + 1]:
                    score = 2
                if (below >> 1) == r + 1:
                    # A hop: only when it can pay at once (see the module docstring).
                    if not (score == 4 or (r + 2 <= KING and tops[r + 2])
                            or len(tops[r]) > 1 or back[r]
                            or (r and (tops[r - 1] or back[r - 1]))):
                        continue
                    score -= 3
                for j in tops[r + 1]:
                    if j != i:
                        scored.append((-score, src | (j + t0)))
        # A foundation's top back onto a fan (never a card that would be safe: pointless).
        done: list[int] = []
        for f in range(nf):
            hf = h[f]
            if hf == 0 or hf - 1 <= hmin or hf - 1 >= KING:
                continue
            state = hf * 2 + ac[f]
            if state in done:
                continue
            done.append(state)
            for j in tops[hf]:
                scored.append((10, f << 8 | (j + t0)))
        scored.sort()
        return home_moves + [m for _, m in scored]

    def _kings_deadlocked(self) -> bool:
        fans = self.fans
        mask = 0
        for k, (i, j, _) in enumerate(self._kings):
            if len(fans[i]) > j:
                mask |= 1 << k
        found = self._deadlock.get(mask)
        if found is None:
            found = self._deadlock[mask] = kings_deadlocked(
                [(i, j, under, self.fans[i][j] & 1) for k, (i, j, under) in enumerate(self._kings)
                 if mask >> k & 1])
        return found


def kings_deadlocked(kings: list[tuple[int, int, tuple[int, ...], int]]) -> bool:
    """Whether the Kings still on the fans must wait for each other in a circle.

    ``kings``: for each King on a fan, (fan number, its height in the fan, the card types under
    it, its colour). A King's foundation has the colour pattern of its colour (rank 12 is even:
    a black King ends a foundation started by a black Ace). A King not listed is home: its
    foundation is complete, so a card still out goes to the other foundation of its pattern.
    """
    present = {0: [k for k, (_, _, _, c) in enumerate(kings) if c == 0],
               1: [k for k, (_, _, _, c) in enumerate(kings) if c == 1]}
    by_place = {(fan, height): k for k, (fan, height, _, _) in enumerate(kings)}
    edges_fixed: list[tuple[int, int]] = []
    # One variable per card under Kings: (Kings above it, its type, possible foundations).
    cards: list[tuple[list[int], int, list[int]]] = []
    longest: dict[int, int] = {}
    for fan, height, _, _ in kings:
        if height > longest.get(fan, -1):
            longest[fan] = height
    for fan, top in sorted(longest.items()):
        under = kings[by_place[(fan, top)]][2]
        for pos, t in enumerate(under):
            above = [by_place[(fan, h)] for h in range(pos + 1, top + 1) if (fan, h) in by_place]
            if t >> 1 == KING:
                edges_fixed += [(k, by_place[(fan, pos)]) for k in above]
                continue
            pattern = (t & 1) ^ ((t >> 1) & 1)
            options = [o for o in present[pattern] if o not in above]
            if not options:
                return True
            cards.append((above, t, options))
    if not cards:
        return _cyclic(len(kings), edges_fixed)
    for pick in itertools.product(*[opts for _, _, opts in cards]):
        # The two cards of a type go to different foundations of their pattern.
        taken: dict[int, int] = {}
        bad = False
        for (_, t, _), o in zip(cards, pick, strict=True):
            if taken.get(t) == o:
                bad = True
                break
            taken[t] = o
        if bad:
            continue
        edges = list(edges_fixed)
        for (above, _, _), o in zip(cards, pick, strict=True):
            edges += [(k, o) for k in above]
        if not _cyclic(len(kings), edges):
            return False
    return True


def _cyclic(n: int, edges: list[tuple[int, int]]) -> bool:
    indegree = [0] * n
    out: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        out[a].append(b)
        indegree[b] += 1
    ready = [k for k in range(n) if indegree[k] == 0]
    seen = 0
    while ready:
        k = ready.pop()
        seen += 1
        for b in out[k]:
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return seen < n


def scotch_safe_moves(game: Game) -> list[str]:
    """See :func:`solrules.solver.safe_moves`: rank r goes home when all lower ranks are home."""
    piles, nf = game._piles, game.foundations.count
    heights = [len(piles[f]) for f in range(nf)]
    hmin = min(heights)
    ac = [RED_OF[piles[f][0]] if piles[f] else 0 for f in range(nf)]
    out: list[str] = []
    for t in game._t_range:
        pile = piles[t]
        if not pile:
            continue
        card = pile[-1]
        r, red = RANK_OF[card], RED_OF[card]
        if r > hmin:
            continue
        for f in range(nf):
            hf = heights[f]
            if hf == r and (hf == 0 or ac[f] ^ (hf & 1) == red):
                if hf == 0:
                    ac[f] = red
                heights[f] += 1
                out.append(f"{game.pile_ids[t]}>{game.pile_ids[f]}")
                break
    return out
