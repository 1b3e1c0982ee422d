"""Yukon for the solver (thoughtful: it reads the face-down cards too).

A column is its cards and its face-down count; the columns are a multiset, the foundations a
height per suit. Dominance (see :func:`solrules.solve`):

- **safe home**: a top card of rank r may go home when both cards of rank r−1 of the other
  colour are home (an Ace always): only those could ever be built on it, and cards never come
  back. Taking it away only uncovers the card under it (a face-down card turns up, which gives
  more moves, never fewer; an emptied column takes a King, which the card could not). Such a
  move is played alone.
- the moves of a King with what lies on it into an empty column are tried into one empty column
  only (empty columns are interchangeable).
- **uncovering a face-up card**: moving cards G (bottom card x, top card t) from column A,
  where x lies on a face-up card y, onto z, the top of column B, only uncovers y (and covers
  z). Take a shortest winning line and such a move in it. Moves that touch neither column
  commute with it. Look at the first later move that touches A or B:
  (a) y going home; (b) a card w other than x going onto y (w fits on y: one rank lower,
  other colour), from anywhere, G and B included (w was face up before, then); (c) cards v…y
  of A (v face up, y or under y) going onto G's top card t;
  (d) anything else, which can be swapped with the move: cards put on G or taken from G (do it
  before, on or from A); y moving, with or without cards under it, anywhere but onto t (move
  it with G on it first, then move G from there); z moving with cards under it (move it first,
  then G onto it); G moving on (one move from A instead: shorter, so not in a shortest line);
  x moving back onto y (the two cancel: shorter). Moving cards off y one group at a time is
  never needed: any face-up card moves with everything on it. So the move can be put just
  before a move of kind (a), (b) or (c), in a line as short, and at that moment: y's suit has
  every card below y home (a), or a card other than x that fits on y is face up (b), or a
  face-up card of A at or under y fits on t (c). Such a move is tried only then (and, when x
  lies on its natural place y — a *hop* — also when every card below y of its suit is home or
  in G, which allows more). Until issue 20 only hops were pruned, with a proof that left out
  (c): the rule cut the only wins of some positions (``YUKON_HOP_FOLLOWED`` in the tests).
- **emptying a column**: moving every card of column A (all face up) onto z only empties A.
  As above, the first later move that touches A or B is either a King going into A (face
  up, and with cards under it: a whole column never moves into a space), or it can be swapped
  with the emptying move or cancels it. So emptying a column is tried only while some face-up
  King has cards under it.

Loss proofs (issue 20, second to fourth parts) live in :mod:`solrules.yukon_losses`:
:func:`~solrules.yukon_losses.yukon_blocked` runs at every position (a position proved lost
has no moves), :func:`~solrules.yukon_losses.yukon_twins_blocked` at the root and, within a
share of the search's effort, after a card turns up or goes home (below); the search shares the
positions its depth-first searchers prove lost (``share_dead``).

*Twins' places in the search* (issue 32): the hard deals of issue 32's sample spend their nodes
in regions that twins' places prove lost but the waiting events alone do not (at 97-99 % of the
positions sampled in three of them). The rule costs up to 48 runs of the waiting events, so it
runs where a region begins, in a position a card has just turned up in or gone home from,
while its runs stay within ``TWINS_SHARE`` of the positions expanded plus ``TWINS_PAID`` per
loss it proved (so it runs more where it pays); the pairs are tried latest proof first. On the
sample: 5732260998071838222 won in 705 nodes (855,798 before), 10143217134555410707 in 13,321
(98,518), 3300840918404133564 proved lost in 40,364 (453,698); where it never pays, a node costs
some 8 % more. (At every position it decides more deals in fewer nodes, at ten to twenty times
the cost of a node; with a larger share, 3244567723203598860 is proved lost in 88,121 nodes
instead of 139,683, but in twice the time.)

*Not asked after a move that can be taken back* (issue 32): when ``yukon_blocked`` does not
prove P lost and a move m can be taken back (``reversible``: cards G, bottom card x, leave a
face-up card y that x fits on for z, the top of another column, which x fits on too: y and z
are x's two places), it does not prove m(P) lost either, so m(P) is not asked. The two
positions differ only in which place x lies on and in the column G stands in. In both, x is
face up and one of its places is a top of another column and not home (z in P, y in m(P)),
so M(x), and L(x), are reached in the first round, whatever else is. Every requirement that
reads the difference is then met in both: H of the place under x and M of a card onto it ask
for L(x); a card of G with a place under it in its column, or a card under y or z with a place
in G, asks for M of a card between them, and x is one (x's own place right under it never
qualifies, in either). The twins' rule reads only the cards at or under a column's lowest
face-up card, which G is not (y is face up under it); no card turns up, no column empties,
no bottom changes. So the same events are reached, and the verdict is the same. A search's
positions are reached by the moves of expanded positions, so the flag ``unblocked`` (set where
``yukon_blocked`` said no, kept by such moves, restored by ``undo`` and ``restore``) is
exact; a third of the positions of the hard deals' searches are reached this way. The other
positions ask ``yukon_blocked`` through :class:`~solrules.yukon_traps.Traps`, which gives its
verdict from the reasons it gave last when one of them holds (``solrules.yukon_traps``).
"""

from __future__ import annotations

from .cards import RANK_OF, RED_OF, SUIT_OF
from .core import Game
from .yukon_losses import _PAIRS as TWINS_ORDER
from .yukon_losses import KING, PARENTS, yukon_twins_pair
from .yukon_traps import Traps

#: For each suit, the two suits of the other colour.
_OTHER = ((2, 3), (2, 3), (0, 1), (0, 1))
#: A card fits on a card p when _CARD_KEY[card] == _PARENT_KEY[p].
_CARD_KEY = tuple(RANK_OF[c] * 2 + RED_OF[c] for c in range(52))
_PARENT_KEY = tuple((RANK_OF[c] - 1) * 2 + 1 - RED_OF[c] if RANK_OF[c] else -1
                    for c in range(52))


#: Twins' places after a card turns up or goes home (see YukonEngine.moves): the runs of the
#: waiting events they cost are held to this share of the positions expanded, and this many
#: more per loss they proved.
TWINS_SHARE = 0.1
TWINS_PAID = 4


class YukonEngine:
    """Search representation of a Yukon position (see the module docstring)."""

    #: Restarting probes in shuffled orders (see ``solrules.solver._search``).
    probes = True

    #: Search also in another fixed order, the plain search's (``solrules.solver._reversed``):
    #: on 60 random deals the reverse move numbering won as many within 20,000 nodes as the
    #: move order below (46), and not the same ones; the plain search's order (issue 20) as
    #: many of the benchmark's (164 of 200 within 20,000 nodes either way), and it wins some
    #: deals at once where the other orders stall.
    mirror = True

    #: Positions proved lost by one depth-first searcher are skipped by all
    #: (``solrules.solver._DepthFirst.run_marking``).
    share_dead = True

    #: The mirror and the probes stop once the search has spent this many nodes in all (see
    #: ``solrules.solver._search``): on the benchmark every deal they won took at most 1,904
    #: (probes) and 11,289 (mirror) nodes, and later their work is mostly lost to a proof of
    #: loss (a probe starts over from the root with a set of its own; the mirror's open
    #: components are proved by nobody), while the prover and best-first expand each position
    #: once. Benchmark deal 14270399781586851470 is proved lost in 140,965 nodes (164,172 with
    #: the mirror running to the end; 139,143 for the prover alone).
    alone_until = 32_768

    def __init__(self, game: Game) -> None:
        self.t0 = game._t_range.start
        self.ncol = len(game._t_range)
        piles = game._piles
        self.cols: list[list[int]] = [list(piles[t]) for t in game._t_range]
        self.down: list[int] = [game._down[t] for t in game._t_range]
        self.seg: list[bytes] = [bytes([self.down[c]]) + bytes(self.cols[c])
                                 for c in range(self.ncol)]
        nf = game.foundations.count
        self.found = [0, 0, 0, 0]  # height per suit
        self.fof = [-1, -1, -1, -1]  # foundation index holding each suit
        self.free: list[int] = []  # empty foundations, lowest first
        for f in range(nf):
            pile = piles[f]
            if pile:
                s = SUIT_OF[pile[0]]
                self.found[s] = len(pile)
                self.fof[s] = f
            else:
                self.free.append(f)
        self.home = sum(self.found)
        self.total = 52 * game.decks
        self.ids = game.pile_ids
        # Face-up cards (but the lowest of a column) not on their natural place, and face-down
        # cards: kept up to date by apply and undo, for the score.
        self.loose = sum(1 for c, col in enumerate(self.cols)
                         for i in range(self.down[c] + 1, len(col))
                         if _PARENT_KEY[col[i - 1]] != _CARD_KEY[col[i]])
        self.hidden = sum(self.down)
        # Twins' places (yukon_twins_blocked) are looked at in the first position expanded,
        # the root, and after a card turns up or goes home (see moves), the pairs that proved
        # a loss last first.
        self.twins_pending = True
        self.twins_pairs: list[int] = list(TWINS_ORDER)  # the latest to prove a loss first
        # Positions expanded, runs of the waiting events spent on twins, losses they proved:
        # the runs are held to a share of the expanded positions, more when they pay.
        self.expanded = 0
        self.twins_runs = 0
        self.twins_found = 0
        # Whether yukon_blocked is known to say no here without asking it: it said no in the
        # position before, and the move since is one that can be taken back (see moves).
        self.unblocked = False
        # yukon_blocked, by the reasons it gave last (solrules.yukon_traps).
        self.traps = Traps()

    def won(self) -> bool:
        return self.home == self.total

    def key(self) -> bytes:
        return b"\xff".join(sorted(self.seg)) + bytes(self.found)

    def piles(self, move: int) -> int:
        """The piles ``move`` reads or changes, as bits by pile number: its source and its
        destination (for a card going home, its suit's foundation; see
        ``solrules.searchers._DepthFirst.run_marking``, *commuting losses*)."""
        return 1 << (move >> 16) | 1 << (move & 0xFF)

    def reversible(self, move: int) -> bool:
        """Whether ``move``, from the position as it is, can be taken back by a move: the
        cards it lifts lie on a face-up card they fit on (one rank higher, other colour), which
        is then the top of its column, and they go onto a column; nothing turns face up (see
        ``solrules.searchers._DepthFirst.run_marking``, *commuting losses*)."""
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        if b < self.t0:
            return False
        ca = a - self.t0
        col = self.cols[ca]
        i = len(col) - n
        return i > self.down[ca] and _PARENT_KEY[col[i - 1]] == _CARD_KEY[col[i]]

    def text(self, move: int) -> str:
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        ids = self.ids
        return f"{ids[a]}>{ids[b]}" if n == 1 else f"{ids[a]}>{ids[b]}/{n}"

    def snapshot(self) -> tuple[object, ...]:
        return (tuple(tuple(c) for c in self.cols), tuple(self.down), tuple(self.seg),
                tuple(self.found), tuple(self.fof), tuple(self.free), self.home, self.loose,
                self.hidden, self.unblocked)

    def restore(self, snap: tuple[object, ...]) -> None:
        cols, down, seg, found, fof, free, home, loose, hidden, unblocked = snap
        self.unblocked = unblocked  # type: ignore[assignment]
        self.twins_pending = False  # a snapshot is of a position expanded
        self.loose = loose  # type: ignore[assignment]
        self.hidden = hidden  # type: ignore[assignment]
        self.cols = [list(c) for c in cols]  # type: ignore[attr-defined]
        self.down = list(down)  # type: ignore[call-overload]
        self.seg = list(seg)  # type: ignore[call-overload]
        self.found = list(found)  # type: ignore[call-overload]
        self.fof = list(fof)  # type: ignore[call-overload]
        self.free = list(free)  # type: ignore[call-overload]
        self.home = home  # type: ignore[assignment]

    def score(self) -> int:
        """Higher is closer to a win: cards home, face-down cards turned, cards in order."""
        return 4 * self.home - 12 * self.hidden - 3 * self.loose

    def apply(self, move: int) -> int:
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        t0 = self.t0
        ca = a - t0
        col = self.cols[ca]
        record = move
        if self.unblocked:
            record |= 1 << 27
        i = len(col) - n
        natural = False  # the cards lifted lie on a face-up card they fit on
        if i > self.down[ca]:
            if _PARENT_KEY[col[i - 1]] != _CARD_KEY[col[i]]:
                self.loose -= 1  # it leaves a card that is not its natural place
                record |= 1 << 26
            else:
                natural = True
        # A move that can be taken back (``reversible``) leaves yukon_blocked's verdict as it
        # was (see moves).
        self.unblocked = self.unblocked and natural and b >= t0
        self.twins_pending = False
        if b < t0:
            card = col.pop()
            s = SUIT_OF[card]
            if self.found[s] == 0:
                self.fof[s] = self.free.pop(0)
                record |= 1 << 25
            self.found[s] += 1
            self.home += 1
            self.twins_pending = True
        else:
            cb = b - t0
            dest = self.cols[cb]
            dest += col[-n:]
            del col[-n:]
            self.seg[cb] = bytes([self.down[cb]]) + bytes(dest)
        if col and self.down[ca] == len(col):
            self.down[ca] -= 1
            self.hidden -= 1
            record |= 1 << 24
            self.twins_pending = True
        self.seg[ca] = bytes([self.down[ca]]) + bytes(col)
        return record

    def undo(self, record: int) -> None:
        a, n, b = (record >> 16) & 0xFF, (record >> 8) & 0xFF, record & 0xFF
        t0 = self.t0
        ca = a - t0
        col = self.cols[ca]
        self.unblocked = bool(record >> 27 & 1)
        self.twins_pending = False  # the position before was expanded
        if record >> 24 & 1:
            self.down[ca] += 1
            self.hidden += 1
        if record >> 26 & 1:
            self.loose += 1
        if b < t0:
            s = self.fof.index(b)
            self.found[s] -= 1
            self.home -= 1
            col.append(s * 13 + self.found[s])
            if record >> 25 & 1:
                self.fof[s] = -1
                self.free.append(b)
                self.free.sort()
        else:
            cb = b - t0
            dest = self.cols[cb]
            col += dest[-n:]
            del dest[-n:]
            self.seg[cb] = bytes([self.down[cb]]) + bytes(dest)
        self.seg[ca] = bytes([self.down[ca]]) + bytes(col)

    def moves(self) -> list[int]:
        """Moves best first; a safe move alone (see the module docstring); none when the
        position is proved lost (:func:`yukon_blocked`, unless known to say no: see the module
        docstring, *not asked after a move that can be taken back*; at the root and after a card
        turned up or home, also :func:`yukon_twins_blocked`: *twins' places in the search*)."""
        cols, down, found, t0 = self.cols, self.down, self.found, self.t0
        if not self.unblocked:
            if self.traps.blocked(cols, down, found):  # yukon_blocked's verdict
                return []
            self.unblocked = True
        self.expanded += 1
        if self.twins_pending and (self.twins_runs <= TWINS_SHARE * self.expanded
                                   + TWINS_PAID * self.twins_found):
            self.twins_pending = False
            pair, runs = yukon_twins_pair(cols, down, found, self.twins_pairs,
                                          self.traps.order)
            self.twins_runs += runs
            if pair >= 0:
                self.twins_found += 1
                self.twins_pairs.remove(pair)
                self.twins_pairs.insert(0, pair)
                return []
        top_of = [-1] * 52  # column whose top is this card
        empty = -1
        for c, col in enumerate(cols):
            if col:
                top_of[col[-1]] = c
            elif empty < 0:
                empty = c
        home_moves: list[int] = []
        for ca, col in enumerate(cols):
            if col:
                top = col[-1]
                s, r = SUIT_OF[top], RANK_OF[top]
                if found[s] == r:
                    f = self.fof[s] if r else self.free[0]
                    move = (ca + t0) << 16 | 1 << 8 | f
                    o1, o2 = _OTHER[s]
                    if r == 0 or (found[o1] >= r and found[o2] >= r):
                        return [move]
                    home_moves.append(move)
        up: list[bool] | None = None
        king_waits = -1  # is a face-up King with cards under it waiting (-1: not looked yet)
        scored: list[tuple[int, int]] = []
        add = scored.append
        for ca, col in enumerate(cols):
            n = len(col)
            d = down[ca]
            a = (ca + t0) << 16
            for i in range(d, n):
                x = col[i]
                p1, p2 = PARENTS[x]
                b1 = top_of[p1] if p1 >= 0 else -1
                b2 = top_of[p2] if p2 >= 0 else -1
                king = empty >= 0 and i > 0 and p1 < 0
                if b1 < 0 and b2 < 0 and not king:
                    continue
                # Score: uncovering a face-down card first, then a card that goes home, then
                # emptying a column; moving a card off its natural place last.
                if i == d and d > 0:
                    score = 40 + d
                elif i == 0:
                    if king_waits < 0:
                        king_waits = int(self._king_waits())
                    if not king_waits:
                        continue  # empties a column that no King could take
                    score = 10
                else:
                    below = col[i - 1]
                    bs = SUIT_OF[below]
                    score = 30 if found[bs] == RANK_OF[below] else 0
                    hop = _PARENT_KEY[below] == _CARD_KEY[x]
                    if not score:
                        # Uncovering a face-up card (see the module docstring): only if it can
                        # pay, now.
                        if up is None:
                            up = self._face_up()
                        if not (_fits_face_up(below, x, up) or _lifts_onto(col, d, i, col[-1])
                                or (hop and all(c in col[i:]
                                                for c in range(bs * 13 + found[bs], below)))):
                            continue
                    if hop:
                        score -= 20
                m = a | (n - i) << 8
                if b1 >= 0 and b1 != ca:
                    add((-score, m | (b1 + t0)))
                if b2 >= 0 and b2 != ca:
                    add((-score, m | (b2 + t0)))
                if king:
                    add((-score + 5, m | (empty + t0)))
        scored.sort()
        return home_moves + [m for _, m in scored]

    def _face_up(self) -> list[bool]:
        up = [False] * 52
        for ca, col in enumerate(self.cols):
            for i in range(self.down[ca], len(col)):
                up[col[i]] = True
        return up

    def _king_waits(self) -> bool:
        for ca, col in enumerate(self.cols):
            for i in range(max(self.down[ca], 1), len(col)):
                if RANK_OF[col[i]] == KING:
                    return True
        return False


def _lifts_onto(col: list[int], d: int, i: int, top: int) -> bool:
    """Whether a face-up card of ``col[d:i]`` (the card ``col[i:]`` leaves, or one under it)
    fits on ``top``: after ``col[i:]`` moves away, that card, with the ones over it, may follow
    the moved cards (see the module docstring)."""
    want = _PARENT_KEY[top]
    return want >= 0 and any(_CARD_KEY[col[j]] == want for j in range(d, i))


def _fits_face_up(y: int, x: int, up: list[bool]) -> bool:
    """Whether a face-up card other than ``x`` fits on ``y`` (one rank lower, other colour)."""
    want = _PARENT_KEY[y]
    if want < 0:
        return False
    rank, red = want >> 1, want & 1
    for suit in (2, 3) if red else (0, 1):
        c = suit * 13 + rank
        if c != x and up[c]:
            return True
    return False


def yukon_safe_moves(game: Game) -> list[str]:
    """See :func:`solrules.solver.safe_moves`: both lower cards of the other colour are home."""
    piles, nf = game._piles, game.foundations.count
    found = [0, 0, 0, 0]
    fof = [-1, -1, -1, -1]
    free: list[int] = []
    for f in range(nf):
        if piles[f]:
            s = SUIT_OF[piles[f][0]]
            found[s], fof[s] = len(piles[f]), f
        else:
            free.append(f)
    now = list(found)  # every card is judged against the position as it is now
    out: list[str] = []
    for t in game._t_range:
        pile = piles[t]
        if not pile or game._down[t] >= len(pile):
            continue
        card = pile[-1]
        s, r = SUIT_OF[card], RANK_OF[card]
        o1, o2 = _OTHER[s]
        if now[s] != r or not (r == 0 or (now[o1] >= r and now[o2] >= r)):
            continue
        if r == 0:
            fof[s] = free.pop(0)
        out.append(f"{game.pile_ids[t]}>{game.pile_ids[fof[s]]}")
    return out
