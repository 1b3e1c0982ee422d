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

The loss proofs (the Kings, the stuck cards, the Kings' order) are in
:mod:`solrules.scotch_losses`, each with its argument.
"""

from __future__ import annotations

from .cards import RANK_OF, RED_OF
from .core import Game
from .scotch_losses import KING, cards_stuck, kings_deadlocked, kings_order_impossible


def _type(card: int) -> int:
    return RANK_OF[card] * 2 + RED_OF[card]


def _wanted(height: int, ace: int) -> tuple[int, ...]:
    """The card types a foundation of that height and Ace colour wants next (an empty one: an
    Ace of either colour)."""
    if height == 0:
        return (0, 1)
    if height < 13:
        return (height * 2 + (ace ^ (height & 1)),)
    return ()


def _depth(fans: list[list[int]], t: int) -> int:
    """Cards above the least buried card of type ``t`` on ``fans`` (99: none there)."""
    best = 99
    for fan in fans:
        if t in fan:
            d = fan[::-1].index(t)
            if d < best:
                best = d
    return best


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
    #: within 100,000 nodes (43 either way) and their turns replay long lines. Issue 32: two
    #: more best-first searchers, :meth:`score_settled` and :meth:`score_settled_ahead`; the
    #: six searchers take a sixth of the nodes each (``alone_ratio`` 5: the five with sets of
    #: their own may spend five times the prover's nodes). Of the 200 fresh deals of
    #: ``bench/fresh_deals_bench.py`` they win 16332354230349107884 (66,936 nodes; unknown at
    #: 1,000,000 before) and 12670189516148722969 (36,481; 637,551 before).
    probes = False
    best_first_alone = True
    best_first_scores = (("score_loose", 1), ("score_ahead", 1), ("score_settled", 1),
                         ("score_settled_ahead", 1))
    alone_ratio = 5
    #: Whether a home move that is not safe is tried only when it can pay at once (issue 20,
    #: fifth part; see the module docstring). The prover and the best-first searchers do;
    #: a second depth-first searcher, with a set of its own, does not (``depth_first_modes``):
    #: the rule reorders the prover's dive, and benchmark deal 14270399781586851470, which the
    #: prover won alone in 17,282 nodes, then takes it 310,674 (13,098 without the rule). The
    #: searchers take equal turns (each wins deals the others do not; see
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

    def score_settled(self) -> int:
        """:meth:`score` of the position *settled* (issue 32): every fan top that lies on a card
        one rank higher and that a foundation wants sent home, again and again (see
        :meth:`_settled`). Such a move can be undone (the foundation gives the card back onto
        the same card), so the two positions are reachable from each other; the other scores
        count a run given back from a foundation to hold other cards as cards lost, and take
        up such a line last. Alone it wins fresh deal 16332354230349107884 in 11,896 nodes
        (:meth:`score_settled_ahead` and the other scores alone: not within 120,000)."""
        fans, h, ac, settled = self._settled()
        return 4 * (self.home + settled) - 3 * self.loose - 6 * self._buried(False, fans, h, ac)

    def score_settled_ahead(self) -> int:
        """:meth:`score_ahead` of the position settled (see :meth:`score_settled`). Fresh deal
        12670189516148722969 gives seven cards back from a foundation onto a fan, builds on
        them, and plays them home again: this score alone wins it in 6,529 nodes,
        :meth:`score_ahead` alone in 169,327 (:meth:`score_settled` not within 120,000)."""
        fans, h, ac, settled = self._settled()
        return (4 * (self.home + settled) - 3 * self.loose - 6 * self._buried(False, fans, h, ac)
                - 3 * self._buried(True, fans, h, ac))

    def _settled(self) -> tuple[list[list[int]], list[int], list[int], int]:
        """The fans, foundation heights and Ace colours once every fan top that lies on a card
        one rank higher and that a foundation wants has gone home (one such card per fan per
        pass, the first foundation that wants it), and how many went (the cards that go do
        not change :attr:`loose`: none lay out of order)."""
        fans, h, ac = self.fans, self.h, self.ac
        # Only a fan whose top lies on a card one rank higher can settle, and only its top
        # changes when it does: the passes look at those alone, in the same order.
        ready = [i for i, fan in enumerate(fans)
                 if len(fan) > 1 and fan[-2] >> 1 == (fan[-1] >> 1) + 1]
        settled = 0
        if not ready:
            return fans, h, ac, settled
        nf = self.nf
        wants = [_wanted(h[g], ac[g]) for g in range(nf)]
        progress = True
        while progress:
            progress = False
            still: list[int] = []
            for i in ready:
                fan = fans[i]
                t = fan[-1]
                for g in range(nf):
                    if t in wants[g]:
                        break
                else:
                    still.append(i)
                    continue
                if not settled:  # copies, the first time only
                    fans = [list(f) for f in fans]
                    h, ac = list(h), list(ac)
                    fan = fans[i]
                if h[g] == 0:
                    ac[g] = t & 1
                h[g] += 1
                wants[g] = _wanted(h[g], ac[g])
                fan.pop()
                settled += 1
                progress = True
                if len(fan) > 1 and fan[-2] >> 1 == (fan[-1] >> 1) + 1:
                    still.append(i)
            ready = still
        return fans, h, ac, settled

    def _buried(self, after: bool, fans: list[list[int]] | None = None,
                h: list[int] | None = None, ac: list[int] | None = None) -> int:
        """Cards above the card each foundation wants next (``after``: the one after it, for the
        foundations that want two more at least), 0 for a card not on the fans. ``fans``,
        ``h``, ``ac``: another position than the engine's (:meth:`score_settled`)."""
        buried = 0
        fans = self.fans if fans is None else fans
        h = self.h if h is None else h
        ac = self.ac if ac is None else ac
        for f in range(self.nf):
            hf = h[f] + after
            if hf == 0:
                buried += min(_depth(fans, 0), _depth(fans, 1)) % 99
            elif hf < 13 and (hf > 1 or not after):
                buried += _depth(fans, hf * 2 + (ac[f] ^ (hf & 1))) % 99
        return buried

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
