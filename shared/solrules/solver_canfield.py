"""Quadruple Canfield for the solver (thoughtful: it reads the reserve and the stock too).

A card is its *type* ``suit * 13 + rank``: the four copies of a card are interchangeable. The key
of a position holds the tableau piles as a multiset, each suit's four foundations as a multiset
of heights, the reserve as its size (its order never changes) and the stock and waste as one
sequence, the order in which the stock deals (waste bottom to top, then the stock top to bottom:
neither dealing nor turning the waste over changes it), plus how many of its cards are on the
waste. Cycles (through the stock, or a card given back and played again) lead to positions
already expanded and are cut by the transposition table.

Pruning, each proven (see :func:`solrules.solve`):

- **safe home**: the foundation moves of :func:`canfield_safe_moves` (see
  :func:`solrules.solver.safe_moves`) are played alone; they are rare before the end of a game.
- a card onto any of several equal foundations (same suit, same height), or into any of several
  empty tableau piles, is tried once.
- **dealing waits for the waste**: dealing (``s>w``) and turning the waste over (``w>s``) only
  change the stock and the waste, so they commute with every move that does not touch the waste.
  In a shortest winning line, move each of them later past such moves as long as one follows:
  the line stays legal and as short. Then every deal or turn is followed by another one or by a
  play from the waste. The search only tries such lines: after a deal or a turn (a flag in the
  position's key) it allows only another one or a play from the waste.

No deadlock rule like Yukon's (:func:`solrules.yukon_losses.yukon_deadlocked`): it rests on
cards that can never move again but home, because the cards they could go onto are home for
good. Here a foundation gives its top card back and ranks wrap past the base, so no card is
ever stuck that way; and no deal of the catalogue has been proved lost to test one on.
"""

from __future__ import annotations

from typing import Any

from .cards import RANK_OF, RED_OF, SUIT_OF
from .core import Game

_RED = tuple(1 if t >= 26 else 0 for t in range(52))


class CanfieldEngine:
    """Search representation of a Quadruple Canfield position (see the module docstring)."""

    #: How ``solrules.solver._search`` shares the nodes out here (issue 20): the prover alone
    #: for its first 2,048 nodes (its first dive wins most deals in about 500), then best-first
    #: with a set of its own (see :meth:`score`) and three quarters of the nodes. A deep
    #: depth-first line that loses its way at move 300 of 480 never comes back: best-first
    #: wins 3 of the 4 benchmark deals the prover left unknown after 40,000 nodes.
    best_first_alone = True
    best_first_weight = 3
    alone_ratio = 3
    alone_after = 2048
    #: :func:`solrules.best_guess` keeps the engine's order here (the hints of issue 13), not
    #: the score.
    guess_by_score = False

    def __init__(self, game: Game) -> None:
        piles = game._piles
        self.nf = nf = game.foundations.count
        self.per = nf // 4
        self.base = b = game.base_rank
        self.r, self.s, self.w = game._r, game._s, game._w
        self.t0 = game._t_range.start
        self.tab: list[list[int]] = [[c % 52 for c in piles[t]] for t in game._t_range]
        self.seg: list[bytes] = [bytes(p) for p in self.tab]
        self.fh: list[int] = [len(piles[f]) for f in range(nf)]
        self.res: list[int] = [c % 52 for c in piles[self.r]]
        waste = [c % 52 for c in piles[self.w]]
        stock = [c % 52 for c in piles[self.s]]
        self.seq: bytes = bytes(waste + stock[::-1])
        self.pos = len(waste)
        self.deal = game.stock_deal
        self.home = sum(self.fh)
        self.total = 52 * game.decks
        self.ids = game.pile_ids
        # Dealt or turned the stock since the last play from the waste (see the docstring).
        self.dealt = False
        # Tableau fit: card x goes on top t when ckey[x] == wkey[t] (down, alternate, wrapping).
        self._ckey = [RANK_OF[t] * 2 + RED_OF[t] for t in range(52)]
        self._wkey = [((RANK_OF[t] - 1) % 13) * 2 + 1 - RED_OF[t] for t in range(52)]
        self._pos = [(RANK_OF[t] - b) % 13 for t in range(52)]
        # The type on top of a foundation of group g holding h cards, and the one it wants.
        self._ftop = [[g * 13 + (b + h - 1) % 13 for h in range(14)] for g in range(4)]

    def won(self) -> bool:
        return self.home == self.total

    def snapshot(self) -> tuple[object, ...]:
        return (tuple(tuple(p) for p in self.tab), tuple(self.seg), tuple(self.fh),
                tuple(self.res), self.seq, self.pos, self.home, self.dealt)

    def restore(self, snap: tuple[object, ...]) -> None:
        tab, seg, fh, res, seq, pos, home, dealt = snap
        self.tab = [list(p) for p in tab]  # type: ignore[attr-defined]
        self.seg = list(seg)  # type: ignore[call-overload]
        self.fh = list(fh)  # type: ignore[call-overload]
        self.res = list(res)  # type: ignore[call-overload]
        self.seq = seq  # type: ignore[assignment]
        self.pos = pos  # type: ignore[assignment]
        self.home = home  # type: ignore[assignment]
        self.dealt = dealt  # type: ignore[assignment]

    def score(self) -> int:
        """Higher is closer to a win: cards home, the reserve emptied, tableau cards in runs."""
        ckey, wkey = self._ckey, self._wkey
        loose = 0
        for pile in self.tab:
            for k in range(1, len(pile)):
                if ckey[pile[k]] != wkey[pile[k - 1]]:
                    loose += 1
        return 4 * self.home - 3 * len(self.res) - 2 * loose

    def _key(self) -> bytes:
        fh, per = self.fh, self.per
        found: list[int] = []
        for g in range(4):
            found += sorted(fh[g * per:(g + 1) * per])
        return (b"\xff".join(sorted(self.seg)) + b"\xfe" + bytes(found)
                + bytes((len(self.res), self.pos)) + self.seq)

    def text(self, move: int) -> str:
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        ids = self.ids
        return f"{ids[a]}>{ids[b]}" if n == 1 else f"{ids[a]}>{ids[b]}/{n}"

    def apply(self, move: int) -> tuple[tuple[int, int, int], bool]:
        before = self.dealt
        a, b = move >> 16, move & 0xFF
        if a == self.s or b == self.s:
            self.dealt = True
        elif a == self.w:
            self.dealt = False
        return self._apply(move), before

    def undo(self, record: tuple[tuple[int, int, int], bool]) -> None:
        raw, self.dealt = record
        self._undo(raw)

    def key(self) -> bytes:
        return self._key() + (b"\x01" if self.dealt else b"")

    def moves(self) -> list[int]:
        if not self.dealt:
            return self._moves(True)
        s, w = self.s, self.w
        return [m for m in self._moves(False) if m >> 16 in (s, w)]

    # -- playing ---------------------------------------------------------------------------------

    def _apply(self, move: int) -> tuple[int, int, int]:
        """Returns (move, card moved or old waste count, 1 if a space was refilled)."""
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        s, w = self.s, self.w
        if a == s:
            old = self.pos
            self.pos = min(old + self.deal, len(self.seq))
            return move, old, 0
        if a == w and b == s:
            old = self.pos
            self.pos = 0
            return move, old, 0
        t0, nf = self.t0, self.nf
        refill = 0
        card = -1
        run: list[int] = []
        if a >= t0:
            pile = self.tab[a - t0]
            run = pile[-n:]
            del pile[-n:]
            if not pile and self.res:
                pile.append(self.res.pop())
                refill = 1
            self.seg[a - t0] = bytes(pile)
        elif a == w:
            p = self.pos - 1
            card = self.seq[p]
            self.seq = self.seq[:p] + self.seq[p + 1:]
            self.pos = p
        elif a == self.r:
            card = self.res.pop()
        else:
            h = self.fh[a] = self.fh[a] - 1
            self.home -= 1
            card = self._ftop[a // self.per][h + 1]
        if b < nf:
            self.fh[b] += 1
            self.home += 1
            if not run:
                run = [card]
        else:
            dest = self.tab[b - t0]
            if run:
                dest += run
            else:
                dest.append(card)
            self.seg[b - t0] = bytes(dest)
        return move, run[0] if run else card, refill

    def _undo(self, record: tuple[int, int, int]) -> None:
        move, extra, refill = record
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        s, w = self.s, self.w
        if a == s or (a == w and b == s):
            self.pos = extra
            return
        t0, nf = self.t0, self.nf
        if b < nf:
            self.fh[b] -= 1
            self.home -= 1
            run = [extra]
        else:
            dest = self.tab[b - t0]
            run = dest[-n:]
            del dest[-n:]
            self.seg[b - t0] = bytes(dest)
        if a >= t0:
            pile = self.tab[a - t0]
            if refill:
                self.res.append(pile.pop())
            pile += run
            self.seg[a - t0] = bytes(pile)
        elif a == w:
            p = self.pos
            self.seq = self.seq[:p] + bytes((extra,)) + self.seq[p:]
            self.pos = p + 1
        elif a == self.r:
            self.res.append(extra)
        else:
            self.fh[a] += 1
            self.home += 1

    # -- moves -----------------------------------------------------------------------------------

    def _moves(self, forced: bool) -> list[int]:
        fh, tab, res, per, t0, nf = self.fh, self.tab, self.res, self.per, self.t0, self.nf
        ckey, wkey, ftop = self._ckey, self._wkey, self._ftop
        # The foundation that takes each type (the first of equal foundations).
        want: dict[int, int] = {}
        for f in range(nf):
            h = fh[f]
            if h < 13:
                t = ftop[f // per][h + 1]
                if t not in want:
                    want[t] = f
        wants: dict[int, list[int]] = {}
        empty = -1
        for i, pile in enumerate(tab):
            if pile:
                wants.setdefault(wkey[pile[-1]], []).append(i)
            elif empty < 0 and not res:
                empty = i
        no: list[int] = []
        scored: list[tuple[int, int]] = []
        add = scored.append
        safe = self._safe_check(want) if forced else _never

        def single(src: int, card: int, base_score: int, to_space: bool) -> int:
            """Add the moves of one card from ``src``; returns a safe move or -1."""
            f = want.get(card)
            m = src << 16 | 1 << 8
            if f is not None:
                if safe(card, src):
                    return m | f
                add((-100 - base_score, m | f))
            for j in wants.get(ckey[card], no):
                add((-60 - base_score, m | (j + t0)))
            if to_space and empty >= 0:
                add((-30 - base_score, m | (empty + t0)))
            return -1

        if res:
            m = single(self.r, res[-1], 30, False)
            if m >= 0:
                return [m]
        if self.pos:
            m = single(self.w, self.seq[self.pos - 1], 0, True)
            if m >= 0:
                return [m]
        for i, pile in enumerate(tab):
            size = len(pile)
            if not size:
                continue
            a = (i + t0) << 16
            top = pile[-1]
            home = want.get(top)
            if home is not None:
                if safe(top, i + t0):
                    return [a | 1 << 8 | home]
                add((-110, a | 1 << 8 | home))
            k = 1
            while k < size and ckey[pile[-k]] == wkey[pile[-k - 1]]:
                k += 1
            for n in range(1, k + 1):
                x = pile[-n]
                dests = wants.get(ckey[x], no)
                space = empty >= 0 and n < size
                if not dests and not space:
                    continue
                if n == size:
                    score = 80 if res else 40  # empties the pile: the reserve refills it
                elif n < k:
                    score = 2  # splits a run: uncovers a card already in sequence
                else:
                    below = pile[-n - 1]
                    score = 70 if below in want else 20
                m = a | n << 8
                for j in dests:
                    if j != i:
                        add((-score, m | (j + t0)))
                if space:
                    add((-score + 10, m | (empty + t0)))
        # Foundation tops back to the tableau (one per distinct foundation).
        seen_states: list[int] = []
        for f in range(nf):
            h = fh[f]
            if not h:
                continue
            state = (f // per) * 16 + h
            if state in seen_states:
                continue
            seen_states.append(state)
            card = ftop[f // per][h]
            m = f << 16 | 1 << 8
            for j in wants.get(ckey[card], no):
                add((10, m | (j + t0)))
            if empty >= 0:
                add((12, m | (empty + t0)))
        if self.pos < len(self.seq):
            add((-10, self.s << 16 | 1 << 8 | self.w))
        elif self.seq:
            add((-10, self.w << 16 | 1 << 8 | self.s))
        scored.sort()
        return [m for _, m in scored]

    def _safe_check(self, want: dict[int, int]) -> Any:
        fh, per, res, t0 = self.fh, self.per, self.res, self.t0
        tab = self.tab
        base = self.base

        def check(card: int, src: int) -> bool:
            if src >= t0:
                if len(tab[src - t0]) == 1 and res:
                    return False
            elif src == self.r and len(res) > 1:
                return False
            return _safe_type(fh, per, base, card)

        return check


def _never(card: int, src: int) -> bool:
    return False


def _safe_type(fh: list[int], per: int, base: int, card: int) -> bool:
    """Conditions (1) and (3) of the Quadruple Canfield safe rule for a card of type ``card``
    that a foundation takes now (see :func:`solrules.solver.safe_moves`)."""
    g = card // 13
    col = 1 if g >= 2 else 0
    p = (card % 13 - base) % 13
    if min(fh[g * per:(g + 1) * per]) < p:
        return False
    # Quick refusal: a card of the other colour one position lower is still out.
    q0 = (p - 1) % 13
    other = (0, 1) if col else (2, 3)
    for og in other:
        if min(fh[og * per:(og + 1) * per]) <= q0:
            return False
    # The highest foundation of each colour: a card at position j of that colour is home
    # (and could be given back) when it holds more than j cards.
    maxh = [max(fh[:2 * per]), max(fh[2 * per:])]
    for wg in range(4):
        cw = 1 if wg >= 2 else 0
        lo = min(fh[wg * per:(wg + 1) * per])
        for q in range(13):
            if lo > q:
                continue  # every copy of this card is home
            k = (p - 1 - q) % 13
            if cw != col ^ ((k + 1) & 1):
                continue
            if all(maxh[col ^ (i & 1)] > (p - i) % 13 for i in range(1, k + 1)):
                return False
    return True


def canfield_safe_moves(game: Game) -> list[str]:
    """See :func:`solrules.solver.safe_moves` (Quadruple Canfield)."""
    piles, nf = game._piles, game.foundations.count
    per = nf // 4
    fh = [len(piles[f]) for f in range(nf)]
    now = list(fh)
    base = game.base_rank
    sources: list[int] = []
    r, w = game._r, game._w
    reserve_left = len(piles[r])
    if reserve_left == 1:
        sources.append(r)
    if piles[w]:
        sources.append(w)
    for t in game._t_range:
        if len(piles[t]) > 1 or (piles[t] and not reserve_left):
            sources.append(t)
    out: list[str] = []
    for src in sources:
        card = piles[src][-1] % 52
        g, p = SUIT_OF[card], (RANK_OF[card] - base) % 13
        # A foundation of the card's suit holding exactly p cards now (and not yet claimed).
        target = next((f for f in range(g * per, (g + 1) * per) if fh[f] == p), -1)
        if target < 0 or not _safe_type(now, per, base, card):
            continue
        fh[target] += 1
        out.append(f"{game.pile_ids[src]}>{game.pile_ids[target]}")
    return out
