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
- **safe 2s** (issue 20, fifth part): an Ace never needs a place on a fan (while one is out,
  a foundation is empty for it: four foundations, four Aces; and nothing lies on an Ace), so a
  2 is never needed as a place either. Once both Aces of a 2's colour pattern are home, the 2
  goes to a foundation of its pattern at height 1, and the pattern's other foundation either
  holds the 2's twin already or is at height 1 too (the same state: either will do). So such a
  2 goes home as a safe move, alone, and is never given back, even while the other pattern's
  Aces are out (until now 2s waited for all four Aces: with an Ace under a King they stayed
  out for most of the game).
- **home moves must pay at once** (issue 20, fifth part): a card c that goes home from fan A
  to foundation F, not as a safe move, changes only A and F, so like a move between fans it
  can wait, in a shortest winning line, until just before the first later move m that touches
  A or F (every move touching neither commutes with it: a move's legality reads only its own
  source and destination). There is one unless c was alone on A and completes F (a King:
  nothing can touch A or F again, so it waits to the end, where it is safe). F giving c back
  onto the card z it uncovered undoes the move, and onto another fan top w is c moved from A to
  w in one move: shorter lines. So m is one of: F's next card goes home from a fan top; z
  goes home or onto a fan top (A empty: nothing); a card goes onto z from a fan top or given
  back by another foundation. The move is only tried when one of those is legal right after it
  (read in the rules, ignoring the engine's other cuts: more moves pass). On benchmark deal
  9008752245769540986 the prover alone wins in 27,848 nodes instead of 87,658: its dive sent
  cards home that only narrowed what was left (a lone King home completes a foundation, which
  then gives nothing back, and empties a fan for good).
- **last card of a fan**: moving the only card of a fan onto another fan is never tried. The
  empty fan is never filled again, so the move only covers the card it lands on.
- **moves between fans** (issue 20; until then for hops only): a card c (rank r) that moves
  from the top of fan A, where it lies on a card z, onto a fan top y of rank r+1 on fan B
  changes only A and B; every move touching neither commutes with it (its legality reads only
  its own source, destination and foundation, and the move's reads only the tops of A and B).
  So in a shortest winning line it can be put just before the first later move m that touches
  A or B (one exists: c must leave B to go home). If m moves c again, home or onto another fan
  top w, then c could have gone there straight from A (the foundation and w are as they were
  just before the move): a shorter line; c back onto z undoes the move. So m is one of: z goes
  home; z goes onto a fan top of rank r_z+1 (c on B counts; y, now covered, does not); a card
  of rank r_z-1 goes onto z, from another fan's top (not c: that is the undo) or given back by
  a foundation; a card of rank r-1 goes onto c, likewise (z counts when it has that rank). Each
  is legal right after the move, so the move is only tried when one of them is. (A *hop*, z of
  rank r+1, was the only case pruned before this issue; issue 14 added the cards given back by
  a foundation, which its first proof had left out. Checked: on 600 random end positions, 8 to
  16 cards out, searched to the end, this rule and the hop-only one give the same verdicts.)
- **Kings**: a King never moves but home, and never comes back, so the cards under it wait for
  it, and its foundation is complete when it goes home. A card under a King therefore belongs to
  another foundation of its colour pattern, whose King must go home after this one; when every
  way of placing these cards makes the Kings wait for each other in a circle, the position is
  lost (checked for each set of Kings still out, so once per few thousand positions).
- **the Kings' order** (issue 20, third part; :func:`kings_order_impossible`): the Kings go
  home in some order, and at the moment each lands the cards under the Kings still out are at
  their places, the foundations it and the earlier ones completed hold one card of each type,
  the others cannot get past a type whose cards are at their places, and every card gone from
  its place but not home lies on a card one rank higher that is free to hold it. When every
  order meets a moment where these cannot all hold, the position is lost. Checked at the
  search's root and after each move to or from a foundation, once per state of the
  foundations where it passes (up to a few milliseconds, several nodes' worth).
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
    #: 1,257 nodes took 261,562). Two best-first searchers (issue 20, fourth part), each with a
    #: set of its own: :meth:`score_loose` and :meth:`score_ahead` (until then :meth:`score`
    #: alone, with three quarters of the nodes); since the fifth part, with a second
    #: depth-first searcher (``depth_first_modes``), the four take a quarter of the nodes each
    #: (in the fourth part three fifths, a fifth, and the prover a fifth). Each score wins
    #: deals the others do not: alone, within 150,000 nodes, on
    #: the 35 benchmark deals that took over 1,000 nodes, :meth:`score` wins 27 of them,
    #: :meth:`score_loose` 28 (16947333863419639029 in 52,785 nodes, 109,001 with
    #: :meth:`score`), :meth:`score_ahead` 27 (11974267003653440217 in 1,668, 96,980 with
    #: :meth:`score_loose`); both win 15476970870814115376 (in 3,992 and 4,009 nodes), which
    #: :meth:`score` and the prover do not (the prover alone wins it in 673,021). No probes:
    #: on the 55 Scotch deals of the benchmark that take over 1,000 nodes, they win none more
    #: within 100,000 nodes (43 either way) and their turns replay long lines.
    probes = False
    best_first_alone = True
    best_first_scores = (("score_loose", 1), ("score_ahead", 1))
    alone_ratio = 4
    #: Whether a home move that is not safe is tried only when it can pay at once (issue 20,
    #: fifth part; see the module docstring). The prover and both best-first searchers do;
    #: a second depth-first searcher, with a set of its own, does not (``depth_first_modes``):
    #: the rule reorders the prover's dive, and benchmark deal 14270399781586851470, which the
    #: prover won alone in 17,282 nodes, then takes it 310,674 (13,098 without the rule). The
    #: four searchers take equal turns (each wins deals the others do not; see
    #: docs/performance.md, "Scotch (issue 20, fifth part)").
    home_pays = True
    #: Whether a 2 goes home as a safe move once both Aces of its colour pattern are home
    #: (issue 20, fifth part; see the module docstring).
    safe_twos = True
    depth_first_modes: tuple[dict[str, object], ...] = ({"home_pays": False},)

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
        # The Kings' order proof runs at the root and after a move to or from a foundation, once
        # per state of the foundations where it does not fire (see moves()).
        self._found_moved = True
        self._order_passed: set[bytes] = set()

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
        return 4 * self.home - 3 * self.loose - 6 * self._buried(False)

    def score_loose(self) -> int:
        """:meth:`score` with a third of its weight on the cards out of order (issue 20, fourth
        part): it lets a fan hold more such cards for a while."""
        return 4 * self.home - self.loose - 6 * self._buried(False)

    def score_ahead(self) -> int:
        """:meth:`score` that also looks at the card each foundation wants after the next one."""
        return 4 * self.home - 3 * self.loose - 6 * self._buried(False) - 3 * self._buried(True)

    def _buried(self, after: bool) -> int:
        """Cards above the card each foundation wants next (``after``: the one after it, for the
        foundations that want two more at least), 0 for a card not on the fans."""
        buried = 0
        h, ac = self.h, self.ac
        for f in range(self.nf):
            hf = h[f] + after
            if hf == 0:
                buried += min(self._depth(0), self._depth(1)) % 99
            elif hf < 13 and (hf > 1 or not after):
                buried += self._depth(hf * 2 + (ac[f] ^ (hf & 1))) % 99
        return buried

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
        a, b = move >> 8, move & 0xFF
        self._found_moved = a < self.nf or b < self.nf
        self._move(a, b)
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
        if cards_stuck(self.fans, self.h, self.ac):
            return []
        if self._found_moved:
            # The Kings' order proof costs up to a few milliseconds (several nodes' worth): it
            # runs only at the root and after a foundation move, and not again for a state of
            # the foundations where it has passed before (after every foundation move it cut
            # the speed 2-4 times and decided the same benchmark deals).
            self._found_moved = False
            h, ac = self.h, self.ac
            found = bytes(sorted([h[f] * 2 + ac[f] if h[f] else 0 for f in range(self.nf)]))
            if found not in self._order_passed:
                if kings_order_impossible(self.fans, h, ac):
                    return []
                self._order_passed.add(found)
        return self._moves()

    def _moves(self) -> list[int]:
        fans, h, ac, nf, t0 = self.fans, self.h, self.ac, self.nf, self.t0
        hmin = min(h)
        # Per colour pattern (the colour of its Aces), the foundations started: once both are,
        # its 2s are safe too (see "safe 2s" in the module docstring).
        started = [0, 0]
        for f in range(nf):
            if h[f]:
                started[ac[f]] += 1
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
                if r <= hmin or (r == 1 and self.safe_twos and started[(t & 1) ^ 1] == 2):
                    return [src | home]
                if not self.home_pays or self._home_pays(i, home, tops):
                    home_moves.append(src | home)
            if len(fan) > 1 and r < KING:
                below = fan[-2]
                rz = below >> 1
                # Prefer moves that uncover a card that can go home, then one that can move.
                score = 0
                if below in want:
                    score = 4
                elif rz < KING and tops[rz + 1]:
                    score = 2
                # Only when it can pay at once (see "moves between fans" in the module
                # docstring): the uncovered card goes home or onto a fan top (c itself, on its
                # new fan, counts; the card c covers no longer does), a card goes onto the
                # uncovered card (not c: that would undo the move) or onto c.
                if not (score == 4
                        or (rz < KING and len(tops[rz + 1]) - (rz == r) > 0)
                        or (rz and (len(tops[rz - 1]) - (rz - 1 == r) - (rz - 1 == r + 1) > 0
                                    or back[rz - 1]))
                        or (r and (tops[r - 1] or rz == r - 1 or back[r - 1]))):
                    continue
                if rz == r + 1:
                    score -= 3  # a hop
                for j in tops[r + 1]:
                    if j != i:
                        scored.append((-score, src | (j + t0)))
        # A foundation's top back onto a fan (never a card that would be safe: pointless).
        done: list[int] = []
        for f in range(nf):
            hf = h[f]
            if hf == 0 or hf - 1 <= hmin or hf - 1 >= KING or (
                    hf == 2 and self.safe_twos and started[ac[f]] == 2):
                continue
            state = hf * 2 + ac[f]
            if state in done:
                continue
            done.append(state)
            for j in tops[hf]:
                scored.append((10, f << 8 | (j + t0)))
        scored.sort()
        return home_moves + [m for _, m in scored]

    def _home_pays(self, i: int, f: int, tops: list[list[int]]) -> bool:
        """Whether sending the top card c of fan ``i`` home to foundation ``f`` can pay at once
        (see "home moves must pay at once" in the module docstring): right after it, foundation
        f's next card is another fan's top, or the card z it uncovers goes home or onto another
        fan's top, or a card goes onto z from another fan's top or from another foundation.
        Read in the rules, not in this engine's pruning (more moves pass: sound either way)."""
        fans, h, ac, nf = self.fans, self.h, self.ac, self.nf
        fan = fans[i]
        t = fan[-1]
        r = t >> 1
        hf = h[f] + 1
        af = ac[f] if h[f] else t & 1
        if hf < 13:
            tn = hf * 2 + (af ^ (hf & 1))
            for j in tops[tn >> 1]:
                if j != i and fans[j][-1] == tn:
                    return True
        if len(fan) == 1:
            return False  # the fan is empty for good: only f could take a card next
        z = fan[-2]
        rz = z >> 1
        for g in range(nf):
            hg, ag = (hf, af) if g == f else (h[g], ac[g])
            if hg == 0:
                if rz == 0:
                    return True
            elif hg == rz and hg < 13 and (ag ^ (hg & 1)) == (z & 1):
                return True
        # tops[] still counts c as fan i's top: never as a place for z or a card for it.
        if rz < KING and len(tops[rz + 1]) - (r == rz + 1) > 0:
            return True
        if rz:
            if len(tops[rz - 1]) - (r == rz - 1) > 0:
                return True
            for g in range(nf):
                if g != f and h[g] == rz:
                    return True
        return False

    def _kings_deadlocked(self) -> bool:
        fans = self.fans
        mask = 0
        for k, (i, j, _) in enumerate(self._kings):
            # Still there: a King leaves only for home and never comes back, but once it has
            # gone a card may be put where it lay (issue 20: counting that card as the King
            # made the rule fire on winnable positions).
            if len(fans[i]) > j and fans[i][j] >> 1 == KING:
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


def cards_stuck(fans: list[list[int]], h: list[int], ac: list[int]) -> bool:
    """Whether some card on the fans can never leave its place (then the position is lost: every
    card must go home). ``fans``: card types bottom to top; ``h``, ``ac``: each foundation's
    height and the colour of its Ace.

    A least fixed point over two kinds of events, each counted the first time it happens: a fan
    card *leaves* its place (L), a card type *is home* (H; every type home now counts). Rules,
    for a card x of rank r on a fan:

    - x may leave only when every card above it in its fan has left (only tops move), and then
      only home — one of the two cards of rank r-1 and the other colour is home (H), or x is an
      Ace — or onto a fan top of rank r+1: a card of that rank at its place with every card
      above it gone, or one that has left its place, or one given back by a foundation (home;
      never a King);
    - x's type may be home when every card above x has left and x is an Ace or a card of rank
      r-1 and the other colour may be home.

    Soundness: take any line of play and the first event in it that the fixed point does not
    derive. Everything it needs happened before it (a card above x left before x could; the
    foundation top x went onto was home, the fan top it went onto was exposed, moved or given
    back), so by minimality those events are derived, and then so is this one: no such first
    event exists. A card that never leaves never goes home, so the position is lost. Cycles
    come out by themselves: cards each waiting under the other's only places never enter the
    fixed point. This contains the pattern of a card lying in one fan above its foundation
    predecessors and above every card it could go onto, and chains and cycles of such across
    fans; it does not know which foundation a card goes to (that is the Kings rule's part)."""
    canhome = [False] * 26
    for f in range(len(h)):
        a = ac[f]
        for k in range(h[f]):
            canhome[k * 2 + (a ^ (k & 1))] = True
    # A rank that a fan top has, or may have at some point: exposed, moved, or given back (a
    # King never comes back: nothing takes it).
    exposed = [False] * 14
    for t in range(2 * KING):
        if canhome[t]:
            exposed[t >> 1] = True
    front: list[int] = []  # per fan, the index of the highest card not known to leave
    left = 0
    for fan in fans:
        n = len(fan)
        if n:
            exposed[fan[-1] >> 1] = True
        front.append(n - 1)
        left += n
    pending: list[int] = []  # types that have left a place but are not yet known to get home
    progress = True
    while progress:
        progress = False
        if pending:
            still: list[int] = []
            for x in pending:
                if canhome[(x >> 1) * 2 - 1 - (x & 1)]:
                    if not canhome[x]:
                        canhome[x] = True
                        progress = True
                else:
                    still.append(x)
            pending = still
        for i, fan in enumerate(fans):
            j = front[i]
            while j >= 0:
                x = fan[j]
                r = x >> 1
                if r == 0 or canhome[r * 2 - 1 - (x & 1)]:
                    canhome[x] = True
                elif r < KING and exposed[r + 1]:
                    if not canhome[x]:
                        pending.append(x)
                else:
                    break
                j -= 1
                left -= 1
                if j >= 0:
                    exposed[fan[j] >> 1] = True
            if j != front[i]:
                front[i] = j
                progress = True
        if not left:
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


def kings_order_impossible(fans: list[list[int]], h: list[int], ac: list[int]) -> bool:
    """Whether no order of the Kings still on the fans going home leaves room for the other
    cards (then the position is lost). ``fans``: card types bottom to top; ``h``, ``ac``: each
    foundation's height and the colour of its Ace.

    Every King on a fan goes home once, as the 13th card of a foundation of its colour pattern,
    and never comes back; so a winning line sends them home in some order K1, K2, ... Look at
    the moment Ki lands (a *snapshot*). Facts that must hold there, for every card still out
    (on a fan, or home in a foundation that is not complete — it may be given back):

    - *at its place* (P): Ki+1, ... and every card under them, and every card under Ki (a King
      leaves only for home, and a card leaves only once the cards above it have); a card under
      one at its place is at its place;
    - *home* (H): K1, ..., Ki; every card of a colour pattern whose two foundations are
      complete (those complete now and those K1..Ki complete); when one of them is complete
      and one card of a type is at its place, the other card of the type (the complete
      foundation holds one card of each type of its pattern);
    - *out* (O, not home): a card at its place; for a pattern with no complete foundation, every
      card of a rank whose two cards are both at their places, or higher (no foundation of the
      pattern can get past that rank); for a pattern whose complete foundation is complete now
      (its cards are known: those still out are the other foundation's), every card of the
      rank of the lowest card at its place, or higher;
    - *gone from its place* (G): a card home or out of the fans now, every card above Ki in its
      fan, and every card above one gone from its place;
    - a card out and gone from its place lies on a fan on a card one rank higher (every card
      put on a fan is), which is out, and is not under a card at its place (it is either at its
      place with everything that lay above it gone, or gone from its place itself), and holds
      no other card; a King is never such a card. So for each rank r there must be at least as
      many such possible holders of rank r+1 (out of the foundations: not H; under no card at
      its place) as cards of rank r out and gone; when there are exactly as many, each of them
      holds one: it is out (O), and every card that lay above it in its fan is gone (G), and
      any other card of rank r gone from its place has nothing to lie on: it is home (H);
    - *counting by type*: of the two cards of a type (one, when the other is in a foundation
      complete now), at least as many are home as there are foundations that must hold that
      type — those K1..Ki complete, and as many as there are cards of one type of that rank or
      higher known home (each lies on a foundation holding every lower rank) — and at most as
      many as there are foundations that can get past that rank (the bounds under *out*);
      when as many are known home as can be, the other is out (O); when only as many can be
      home as must, they are (H).

    These facts are closed under the rules; a contradiction (a card home and out, or at its
    place and gone, too few holders, a type with more cards home than can be or fewer than
    must) means that no winning line sends the Kings home in an
    order starting K1, ..., Ki. When every order has such a prefix, the position is lost. (The
    Kings rule, :func:`kings_deadlocked`, is the special case of cards under a King that must
    be home before it.) Cost: at most one snapshot per set of Kings and next King (4 Kings on
    the fans: 32), each a few passes over the cards still out."""
    types: list[int] = []
    fan_of: list[int] = []
    place: list[int] = []  # height in its fan (fan cards)
    at: list[list[int]] = []
    kings: list[int] = []
    for i, fan in enumerate(fans):
        row = []
        for j, t in enumerate(fan):
            if t >> 1 == KING:
                kings.append(len(types))
            row.append(len(types))
            types.append(t)
            fan_of.append(i)
            place.append(j)
        at.append(row)
    if not kings:
        return False
    done = [0, 0]
    for f in range(len(h)):
        if h[f] == 13:
            done[ac[f]] += 1
        else:
            for k in range(h[f]):
                types.append(k * 2 + (ac[f] ^ (k & 1)))
                fan_of.append(-1)
                place.append(-1)
    n = len(types)
    rank = [t >> 1 for t in types]
    by_rank: list[list[int]] = [[] for _ in range(13)]
    by_pattern: list[list[int]] = [[], []]
    # Per pattern, the cards out of each type (two, or one when the other is in a complete
    # foundation), lowest rank first.
    pairs: list[list[list[int]]] = [[[] for _ in range(13)], [[] for _ in range(13)]]
    for x, t in enumerate(types):
        p = (t & 1) ^ ((t >> 1) & 1)
        by_rank[t >> 1].append(x)
        by_pattern[p].append(x)
        pairs[p][t >> 1].append(x)
    rows = [row for row in at if row]
    failed: set[int] = set()

    def snapshot_ok(home: int, k: int) -> bool:
        """The facts at the moment Kings[k] lands, the Kings in the bit set ``home`` being home
        already."""
        c = list(done)
        at_place = bytearray(n)
        is_home = bytearray(n)
        out = bytearray(n)
        gone = bytearray(n)
        for kk, x in enumerate(kings):
            row = at[fan_of[x]]
            if home >> kk & 1 or kk == k:
                c[types[x] & 1] += 1
                is_home[x] = 1
                if kk == k:
                    for y in row[:place[x]]:
                        at_place[y] = 1
                    for y in row[place[x] + 1:]:
                        gone[y] = 1
            else:
                for y in row[:place[x] + 1]:
                    at_place[y] = 1
        # Per pattern and rank: how many of the cards out of that type may be home (the
        # foundations not complete now that can reach past that rank) at most.
        most = [[2] * 13, [2] * 13]
        future = [c[0] - done[0], c[1] - done[1]]
        for p in (0, 1):
            if c[p] == 2:
                for x in by_pattern[p]:
                    is_home[x] = 1
                continue
            one = both = 13
            for r, xs in enumerate(pairs[p]):
                held = 0
                for x in xs:
                    held += at_place[x]
                if held and r < one:
                    one = r
                if held == 2 and r < both:
                    both = r
            for r in range(13):
                if c[p] == 1:
                    most[p][r] = future[p] + (r < one)
                else:
                    most[p][r] = (r < both) + (r < one)
            bound = 13
            for r, xs in enumerate(pairs[p]):
                held = 0
                for x in xs:
                    held += at_place[x]
                if not held:
                    continue
                if c[p] == 1:
                    if done[p]:
                        bound = min(bound, r)
                    elif held == 2:
                        return False
                    else:
                        for x in xs:
                            if not at_place[x]:
                                is_home[x] = 1
                elif held == 2:
                    bound = min(bound, r)
            if bound < 13:
                for r in range(bound, 13):
                    for x in pairs[p][r]:
                        out[x] = 1
        for x in range(n):
            if fan_of[x] < 0 or is_home[x]:
                gone[x] = 1
        changed = True
        while changed:
            changed = False
            blocked = bytearray(n)
            for row in rows:
                above = False
                for x in row:
                    if above:
                        if not gone[x]:
                            gone[x] = 1
                    elif gone[x]:
                        above = True
                held_above = False
                for x in reversed(row):
                    if held_above:
                        blocked[x] = 1
                    elif at_place[x]:
                        held_above = True
            # Cards home by type: at least as many as the foundations that must hold the type
            # (those completed by K1..Ki, and one per card of that rank or higher known home),
            # at most as many as can.
            for p in (0, 1):
                if c[p] == 2:
                    continue
                least = future[p]
                for r in range(12, -1, -1):
                    xs = pairs[p][r]
                    homes = 0
                    maybe = 0
                    for x in xs:
                        homes += is_home[x]
                        maybe += not (out[x] or at_place[x])
                    if homes > least:
                        least = homes
                    if homes > most[p][r] or maybe < least:
                        return False
                    if homes == most[p][r]:
                        for x in xs:
                            if not is_home[x] and not out[x]:
                                out[x] = 1
                                changed = True
                    if maybe == least:
                        for x in xs:
                            if not (out[x] or at_place[x]) and not is_home[x]:
                                is_home[x] = 1
                                gone[x] = 1
                                changed = True
            floating = [0] * 13
            for x in range(n):
                if (is_home[x] and (at_place[x] or out[x])) or (at_place[x] and gone[x]):
                    return False
                if out[x] and gone[x]:
                    floating[rank[x]] += 1
            if floating[KING]:
                return False
            for r in range(KING + 1):
                holders = ([w for w in by_rank[r + 1] if not is_home[w] and not blocked[w]]
                           if r < KING else [])
                if floating[r] > len(holders):
                    return False
                if floating[r] == len(holders):
                    # No holder left: a card gone from its place is home.
                    for x in by_rank[r]:
                        if gone[x] and not out[x] and not is_home[x]:
                            is_home[x] = 1
                            changed = True
                if floating[r] and floating[r] == len(holders):
                    for w in holders:
                        if not out[w]:
                            out[w] = 1
                            changed = True
                        if fan_of[w] >= 0:
                            for y in at[fan_of[w]][place[w] + 1:]:
                                if not gone[y]:
                                    gone[y] = 1
                                    changed = True
        return True

    full = (1 << len(kings)) - 1
    # Kings with fewer cards over them first: the order found first when there is one.
    order = sorted(range(len(kings)), key=lambda k: len(at[fan_of[kings[k]]]) - place[kings[k]])

    def order_exists(home: int) -> bool:
        if home == full:
            return True
        if home in failed:
            return False
        for k in order:
            if not home >> k & 1 and snapshot_ok(home, k) and order_exists(home | 1 << k):
                return True
        failed.add(home)
        return False

    return not order_exists(0)
