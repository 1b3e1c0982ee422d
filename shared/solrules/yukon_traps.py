"""Traps: the reason :func:`~solrules.yukon_losses.yukon_blocked` proved a position lost, kept
to prove the next ones at a fraction of the cost (issue 32).

The waiting events (H, M and L of each card, and E: see ``yukon_blocked``) are reached by rules,
each event by one of a few *ways*, each way a list of events it needs. In a position, a set T of
events is *closed* when every way to reach an event of T needs an event of T. Then no event of
T is reached: the first one reached would have a way whose events were all reached before it,
none of them in T. So when T holds some H(c), no line puts c home and ``yukon_blocked`` proves
the position lost. The ways, as ``yukon_blocked`` (``_waiting``) has them, in a position with
the foundations' heights, the card lying on each card, the face-down cards, the columns'
bottom cards and their empty columns:

- H(c), c not home: needs H of the card below c in its suit (unless that one is home) and L of
  the card lying on c, if any. Closed when c is not home and the card below is in T with its
  H, or the card on c is in T with its L.
- M(c): when c is face down, needs L of the card on it. A King needs E and not to be the bottom
  card of a column; another card a place p (one of the two cards it fits on) that is not home,
  with no card on it or c itself or a card whose L is reached (other rules may ask more of a
  place — same-column places, twins that need both — which only makes M harder to reach).
  Closed when c is face down under a card with its L in T; or c is a King at the bottom of a
  column, or with E in T; or c is not a King and each of its places is home, or has c on it,
  or a card with its L in T.
- L(c) is reached with H(c) or M(c): it is in T when both are.
- E: needs an empty column, or L of some column's bottom card. Closed when no column is empty
  and every bottom card has its L in T.

When ``yukon_blocked`` proves a position lost, some H was not reached; from such a card the
events its ways wait for (the card below, the card on it, the places' covers, ...) are
followed, as they were in that position, into a small set T, closed there. A search meets many
positions lost for the same reason (a plateau's ways out, where the same few cards wait for
each other), so the engine keeps the last few such sets and checks first whether one of them is
closed in the position (:meth:`Traps.blocked`): if so, ``yukon_blocked`` would prove it lost,
and it is not asked. The verdict is the same either way, so the search is the same, node for
node: only cheaper.
"""

from __future__ import annotations

from .cards import RANK_OF, SUIT_OF
from .yukon_losses import _BELOW, _BY_RANK, _PLACES, KING, Reached, _tables, _waiting

#: How many traps are kept (the most recently useful first), and how many cards whose H was
#: not reached are tried as the start of a new one (the smallest set is kept).
KEPT = 4
STARTS = 3


class Trap:
    """A set T of events (see the module docstring): the cards whose H is in T, those whose
    M is, whether E is; and per card whether its H, and its L, are in T."""

    __slots__ = ("e", "hs", "in_h", "in_l", "lowest", "ms")

    def __init__(self, in_h: list[bool], in_m: list[bool], e: bool) -> None:
        self.hs = [c for c in range(52) if in_h[c]]
        self.ms = [c for c in range(52) if in_m[c]]
        self.in_h = in_h
        self.in_l = [h and m for h, m in zip(in_h, in_m, strict=True)]
        self.e = e
        # What ``closed`` reads of the H in T: the cards whose card below is not in T with its
        # H, the lowest of each run of a suit in T. A card over them in the run waits in T for
        # the card below it, whatever the position, and is not home when they are not.
        self.lowest = [c for c in self.hs if not in_h[_BELOW[c]]]

    def closed(self, above: list[int], hidden: list[bool], bottom: list[bool],
               bottoms: list[int], empty: bool, found: list[int]) -> bool:
        """Whether T is closed in the position given by its tables (``above``: the card on
        each card, ``_NONE`` for none, ``_NONE`` itself included; ``empty``: a column is
        empty)."""
        in_l = self.in_l
        for c in self.lowest:
            if RANK_OF[c] < found[SUIT_OF[c]] or not in_l[above[c]]:
                return False  # home (no H to wait for), or its H waits for nothing in T
        for c in self.ms:
            if hidden[c] and in_l[above[c]]:
                continue
            if RANK_OF[c] == KING:
                if bottom[c] or self.e:
                    continue
                return False
            for p in _PLACES[c]:
                if RANK_OF[p] < found[SUIT_OF[p]]:
                    continue
                q = above[p]
                if q != c and not in_l[q]:
                    return False
        if self.e:
            if empty:
                return False
            for b in bottoms:
                if not in_l[b]:
                    return False
        return True


def _trap(r: Reached, start: int, found: list[int]) -> Trap | None:
    """A set T closed in the position ``_waiting`` left ``r`` of, from H(``start``), which was
    not reached: the events each event of T waits for there, followed. None when some event's
    wait is not one the module docstring's rules can say (a same-column place, twins)."""
    h, gone, above = r.h, r.gone, r.above
    in_h = [False] * 53
    in_m = [False] * 53
    e = False
    work = [start]  # a card, its H to explain; a card + 64, its M; -1, E
    in_h[start] = True

    def wait_l(w: int) -> None:
        if not in_h[w]:
            in_h[w] = True
            work.append(w)
        if not in_m[w]:
            in_m[w] = True
            work.append(w + 64)

    while work:
        x = work.pop()
        if x < 0:  # E: every bottom card's L
            for b in r.bottoms:
                if gone[b]:
                    return None
                wait_l(b)
        elif x < 64:  # H(c)
            b = _BELOW[x]
            if not h[b]:
                if not in_h[b]:
                    in_h[b] = True
                    work.append(b)
                continue
            w = above[x]
            if gone[w]:
                return None
            wait_l(w)
        else:  # M(c)
            c = x - 64
            w = above[c]
            if r.hidden[c] and not gone[w]:
                wait_l(w)
                continue
            if RANK_OF[c] == KING:
                if r.bottom[c]:
                    continue
                if r.empty:
                    return None
                if not e:
                    e = True
                    work.append(-1)
                continue
            for p in _PLACES[c]:
                if RANK_OF[p] < found[SUIT_OF[p]]:
                    continue
                q = above[p]
                if q == c:
                    continue
                if gone[q]:
                    return None
                wait_l(q)
    return Trap(in_h, in_m, e)


class Traps:
    """The last few traps, for one search (see the module docstring)."""

    def __init__(self) -> None:
        self.recent: list[Trap] = []
        self.order: list[int] = []

    def blocked(self, cols: list[list[int]], down: list[int], found: list[int]) -> bool:
        """:func:`~solrules.yukon_losses.yukon_blocked`'s verdict: from a trap kept, when one
        is closed here, else by asking it (and keeping a trap when it proves the loss)."""
        recent = self.recent
        tables = _tables(cols, down)
        if recent:
            above, hidden, bottom, _, _, bottoms, empty = tables
            for i, trap in enumerate(recent):
                if trap.closed(above, hidden, bottom, bottoms, empty, found):
                    if i:
                        recent.insert(0, recent.pop(i))
                    return True
        keep: list[Reached] = []
        if not _waiting(cols, down, found, -1, -1, keep, self.order, tables):
            return False
        r = keep[0]
        best: Trap | None = None
        tried = 0
        for c in _BY_RANK:
            if not r.h[c]:
                found_trap = _trap(r, c, found)
                if found_trap is not None and (best is None
                                               or len(found_trap.hs) < len(best.hs)):
                    best = found_trap
                tried += 1
                if tried == STARTS:
                    break
        if best is not None:
            recent.insert(0, best)
            del recent[KEPT:]
        return True
