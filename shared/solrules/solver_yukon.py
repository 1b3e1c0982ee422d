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

Loss proofs (issue 20, second part). A position proved lost has no moves. The rule is
:func:`yukon_blocked` (*waiting events*): every card left must go home, each going home waits
for the card on it to move and for the card below it in its suit, and a card's first move onto a
column waits for one of its two places to be uncovered (a King's, for an empty column); when
these waits leave some card unable ever to go home, whatever the order of play, the position is
lost. It contains the earlier rule (:func:`yukon_deadlocked`: cards whose both places are home,
that must go home in a circle), and adds cards buried on their own places (a card lying, in one
column, over both cards it could go onto, with nothing between that could move: it can only go
home), circles of such waits through several columns and suits, face-down cards (which move
only once turned up), and Kings over other cards when no column can be emptied before they go
home. It costs one pass over the cards per round, a few rounds per position. Issue 20's third
part made it know that a place that goes home is gone, and that twins lying one over the other
may need both their places at once (see :func:`yukon_blocked`); and the search now shares the
positions its depth-first searchers prove lost (``share_dead``). Its fourth part adds *twins'
places* (:func:`yukon_twins_blocked`, at the root only): a card lies on one of its two places
from its first move onto a column until it goes home, so whichever of two twins does so first,
the other then needs the other place.
"""

from __future__ import annotations

from .cards import RANK_OF, RED_OF, SUIT_OF
from .core import Game

KING = 12
#: The card of the same rank and colour in the other suit (C↔S, H↔D).
_TWIN = tuple(c + 13 if (c // 13) % 2 == 0 else c - 13 for c in range(52))
#: For each suit, the two suits of the other colour.
_OTHER = ((2, 3), (2, 3), (0, 1), (0, 1))
#: A card fits on a card p when _CARD_KEY[card] == _PARENT_KEY[p].
_CARD_KEY = tuple(RANK_OF[c] * 2 + RED_OF[c] for c in range(52))
_PARENT_KEY = tuple((RANK_OF[c] - 1) * 2 + 1 - RED_OF[c] if RANK_OF[c] else -1
                    for c in range(52))
#: The two cards each card may be built on (one rank higher, other colour); -1 for a King.
_PARENTS = tuple(
    (_OTHER[SUIT_OF[c]][0] * 13 + RANK_OF[c] + 1, _OTHER[SUIT_OF[c]][1] * 13 + RANK_OF[c] + 1)
    if RANK_OF[c] < KING else (-1, -1) for c in range(52))


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
        # the root, only: elsewhere they cost too much (see the function).
        self.twins_pending = True

    def won(self) -> bool:
        return self.home == self.total

    def key(self) -> bytes:
        return b"\xff".join(sorted(self.seg)) + bytes(self.found)

    def text(self, move: int) -> str:
        a, n, b = move >> 16, (move >> 8) & 0xFF, move & 0xFF
        ids = self.ids
        return f"{ids[a]}>{ids[b]}" if n == 1 else f"{ids[a]}>{ids[b]}/{n}"

    def snapshot(self) -> tuple[object, ...]:
        return (tuple(tuple(c) for c in self.cols), tuple(self.down), tuple(self.seg),
                tuple(self.found), tuple(self.fof), tuple(self.free), self.home, self.loose,
                self.hidden)

    def restore(self, snap: tuple[object, ...]) -> None:
        cols, down, seg, found, fof, free, home, loose, hidden = snap
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
        i = len(col) - n
        if i > self.down[ca] and _PARENT_KEY[col[i - 1]] != _CARD_KEY[col[i]]:
            self.loose -= 1  # it leaves a card that is not its natural place
            record |= 1 << 26
        if b < t0:
            card = col.pop()
            s = SUIT_OF[card]
            if self.found[s] == 0:
                self.fof[s] = self.free.pop(0)
                record |= 1 << 25
            self.found[s] += 1
            self.home += 1
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
        self.seg[ca] = bytes([self.down[ca]]) + bytes(col)
        return record

    def undo(self, record: int) -> None:
        a, n, b = (record >> 16) & 0xFF, (record >> 8) & 0xFF, record & 0xFF
        t0 = self.t0
        ca = a - t0
        col = self.cols[ca]
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
        position is proved lost (:func:`yukon_blocked`; at the root, also
        :func:`yukon_twins_blocked`)."""
        cols, down, found, t0 = self.cols, self.down, self.found, self.t0
        if yukon_blocked(cols, down, found):
            return []
        if self.twins_pending:
            self.twins_pending = False
            if yukon_twins_blocked(cols, down, found):
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
                p1, p2 = _PARENTS[x]
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


def yukon_deadlocked(cols: list[list[int]], found: list[int]) -> bool:
    """Whether the cards left in the columns must go home in an order that cannot exist.

    ``cols``: the columns' cards, bottom to top (face-down ones included: the proof does not
    care which are face up); ``found``: the foundation height of each suit.

    A card is *stuck* when it is not a King and both cards it could be built on (one rank
    higher, other colour) are home: cards never come back, so it can never move again except
    home (only a King goes into a space). Whatever lies directly under a stuck card c can only be
    uncovered by c going home, so c goes home before that card. With the foundations' own order
    (within a suit, lower ranks first) these precedences must not close a circle; if they do,
    no line of moves puts every card home, whatever the order of play: the position is lost.
    The simplest circle is a stuck card lying (directly, or through stuck cards) on a lower card
    of its own suit; the others run through several suits. Cheap to rule out: no card is stuck
    until some card two ranks above the lowest ones is home.
    """
    # The lowest home height over both suits of each colour bounds which cards can be stuck.
    black, red = min(found[0], found[1]), min(found[2], found[3])
    if black < 2 and red < 2:
        return False  # no card has both places home yet (most positions: keep this cheap)
    after: list[list[int]] = [[] for _ in range(52)]  # card -> cards that go home after it
    edges = 0
    for col in cols:
        for i in range(1, len(col)):
            c = col[i]
            r = RANK_OF[c]
            if r == KING or (red if SUIT_OF[c] < 2 else black) < r + 2:
                continue
            after[c].append(col[i - 1])
            edges += 1
    if not edges:
        return False
    # Kahn's algorithm over the cards still out; a card left over lies on a circle.
    indegree = [0] * 52
    out: list[int] = []
    for s in range(4):
        for r in range(found[s], 13):
            c = s * 13 + r
            out.append(c)
            if r > found[s]:
                indegree[c] += 1
    for c in out:
        for d in after[c]:
            indegree[d] += 1
    ready = [c for c in out if indegree[c] == 0]
    done = 0
    while ready:
        c = ready.pop()
        done += 1
        if RANK_OF[c] < KING:  # the next card of its suit is out too
            indegree[c + 1] -= 1
            if indegree[c + 1] == 0:
                ready.append(c + 1)
        for d in after[c]:
            indegree[d] -= 1
            if indegree[d] == 0:
                ready.append(d)
    return done < len(out)


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


def yukon_blocked(cols: list[list[int]], down: list[int], found: list[int]) -> bool:
    """Whether some card left in the columns can never go home (*waiting events*).

    ``cols``: the columns' cards, bottom to top; ``down``: each column's face-down count;
    ``found``: the foundation height of each suit.

    From the position, look at these events of any line of play: H(c), card c goes home; M(c),
    the first time c moves onto a column (with whatever lies on it); L(c), the first time c
    moves at all, which is H(c) or M(c); and E, the first time a column is empty. Each needs
    others to happen strictly before it (the same move for L(c) and H(c) or M(c)):

    - H(c) needs H of the card below c in its suit (unless that one is home), and, when a card
      w lies on c, L(w): c must be the top of its column, and w leaves c only by moving.
    - M(c) needs, when c is face down, L of the card on it (c must turn up first). If c is not
      a King, c goes onto one of the two cards p one rank higher of the other colour, which must
      be out (cards never come back) and a column's top then: M(c) needs, for some such p, that
      p is a top now, or L(w) for the card w on p now, w other than c (if c lies on p itself, c
      cannot go onto p without moving off it first); and when p lies over c in c's column, also
      M of p or of a card between them (until one of those moves onto a column, p stays over c:
      moves of cards under c carry both, a card between goes home only once p has left it, and
      p going home leaves no place); when p lies under c in c's column, M of a card strictly
      between them (c's own first move onto a column is the one onto p, and a card between
      goes home only once c has left it: until such a card moves, c stays over p). A King goes
      only into an empty column:
      M(c) needs E, and never happens for a King at the bottom of its column (moving a whole
      column into a space is not a move).
    - E happens now if a column is empty, else needs L of some column's bottom card (a column
      empties only when its bottom card moves).
    - *Twins* (issue 20, third part): M(c') needs *both* places of c' to qualify (as above)
      when c' is face down, its twin c (same rank and colour: the same two places) lies over it
      with only face-down cards between, and a card d of c's suit, lower than c and not home,
      lies under c'. Then c leaves c' before c' turns up, and not by going home (H(c) needs
      H(d), d needs c' gone, c' needs c gone): c moves onto one of the two places, and from
      then on lies on one of them (it moves again only onto one of them, or home) until it goes
      home, which is after L(c'). So when c' first moves onto a column, c covers one place and
      c' goes onto the other: both are out, and each has been uncovered (the one c lies on
      before M(c)).

    Playing these rules forward from the events that need nothing (each event happens once
    every requirement of it happened) reaches every event of any won line: the first event of
    the line that the rules do not reach would find its requirements met by events before it in
    the line, all reached. So when some H(c) is not reached, no line puts c home: the position
    is lost. (The events of a won line are reached whatever else is: a card's M is looked for
    even once its H is reached, since the rules for other cards ask for M.) The rules are
    played in rounds over the cards, by rank, until a round reaches
    nothing new (about five rounds: a node of the search costs some 2.4 times as much).

    This holds whatever the cards turned up are (every card is read) and contains the older
    rules: a card whose both places are home can only go home (``yukon_deadlocked``); a card
    lying over both its places in one column, over cards that cannot move either, can never
    move onto a column (*buried on its own places*: the card it would go onto cannot be a top
    while it lies over it); and circles of such waits across columns and suits; and a King over
    other cards when no column can be emptied before it goes home. Issue 20's third part adds
    a place that goes home before the card that needs it is free (a place over or under the
    card in its column qualifies only once a card between moves onto a column, not home) and
    twins that need their two places at once: at the root they prove 3 more of the
    catalogue's unknown deals lost (and one of the benchmark's), and never fire on the 114,188
    positions along its won lines.
    """
    return _waiting(cols, down, found, -1, -1)


def _waiting(cols: list[list[int]], down: list[int], found: list[int], first: int,
             second: int) -> bool:
    """:func:`yukon_blocked`'s rules; with twins ``first`` and ``second`` (else -1), also the
    requirement of :func:`yukon_twins_blocked`'s case where ``first`` lies on a place first."""
    above = [-1] * 52  # the card lying directly on each card
    home = [False] * 52
    for s in range(4):
        for r in range(found[s]):
            home[s * 13 + r] = True
    hidden = [False] * 52
    bottom = [False] * 52
    where = [-1] * 52  # column of each card left
    height = [0] * 52  # and its place there (0: the bottom)
    empty = False  # E happened
    for ca, col in enumerate(cols):
        if not col:
            empty = True
            continue
        bottom[col[0]] = True
        for i in range(1, len(col)):
            above[col[i - 1]] = col[i]
        for i, c in enumerate(col):
            where[c] = ca
            height[c] = i
        for i in range(down[ca]):
            hidden[col[i]] = True
    bottoms = [c for c in range(52) if bottom[c]]
    # Twins (see the docstring): a face-down card whose twin lies over it, with only face-down
    # cards between, over a lower card of the twin's suit that is not home, needs both places.
    both = [False] * 52
    for ca, col in enumerate(cols):
        dn = down[ca]
        for j in range(1, dn):
            c = col[j]
            t = _TWIN[c]
            if RANK_OF[c] == KING or where[t] != ca or not j < height[t] <= dn:
                continue
            s, r = SUIT_OF[t], RANK_OF[t]
            if any(SUIT_OF[d] == s and found[s] <= RANK_OF[d] < r for d in col[:j]):
                both[c] = True
    # Cards whose M the rules for a place in the same column ask for (between a card and its
    # place): only those are looked at again once their H is reached.
    needm = [False] * 52
    for ca, col in enumerate(cols):
        for i, c in enumerate(col):
            for p in _PARENTS[c]:
                if p >= 0 and where[p] == ca:
                    hp = height[p]
                    for b in (col[i + 1:hp + 1] if hp > i else col[hp + 1:i]):
                        needm[b] = True
    # Rounds over the cards whose events are not all reached yet, by rank (most requirements
    # of H are the card below in the suit), until a round reaches nothing new.
    h = list(home)  # H reached (home already: before the position)
    gone = list(home)  # L reached
    moved = [False] * 52  # M reached
    pending = [s * 13 + r for r in range(13) for s in range(4) if r >= found[s]]
    missing = len(pending)  # cards whose H is not reached yet
    while missing:
        progress = False
        if not empty:
            for b in bottoms:
                if gone[b]:
                    empty = True
                    break
        rest: list[int] = []
        for c in pending:
            w = above[c]
            if not h[c] and (h[c - 1] or RANK_OF[c] == found[SUIT_OF[c]]) and (
                    w < 0 or gone[w]):
                h[c] = gone[c] = progress = True
                missing -= 1
            if not moved[c] and (w < 0 or not hidden[c] or gone[w]):
                if RANK_OF[c] == KING:
                    can = empty and not bottom[c]
                else:
                    ok = 0
                    for p in _PARENTS[c]:
                        if home[p]:
                            continue
                        q = above[p]
                        if q == c or (q >= 0 and not gone[q]):
                            continue
                        if where[p] == where[c]:
                            col = cols[where[c]]
                            if height[p] > height[c]:
                                # p lies over c: p or a card between them must move onto a
                                # column first.
                                if not any(moved[b]
                                           for b in col[height[c] + 1:height[p] + 1]):
                                    continue
                            elif not any(moved[b] for b in col[height[p] + 1:height[c]]):
                                # p lies under c: a card between them must move onto a
                                # column first (with c on it).
                                continue
                        ok += 1
                        if not both[c]:
                            break
                    can = ok == 2 or (ok == 1 and not both[c])
                    if can and c == second and not h[first]:
                        # Twins, the first on a place (yukon_twins_blocked): the second goes
                        # onto a place that qualifies while the first holds the other.
                        p1, p2 = _PARENTS[c]
                        can = ((_qualifies(c, p1, cols, above, home, gone, moved, where, height)
                                and _holds(p2, first, above, home, gone))
                               or (_qualifies(c, p2, cols, above, home, gone, moved, where,
                                              height)
                                   and _holds(p1, first, above, home, gone)))
                if can:
                    moved[c] = gone[c] = progress = True
            if not h[c] or (needm[c] and not moved[c]):
                rest.append(c)
        if not progress:
            return True
        pending = rest
    return False


def _qualifies(c: int, p: int, cols: list[list[int]], above: list[int], home: list[bool],
               gone: list[bool], moved: list[bool], where: list[int], height: list[int]) -> bool:
    """Whether place ``p`` lets card ``c`` move onto a column (the loop of :func:`_waiting`
    inlines it for speed)."""
    if home[p]:
        return False
    q = above[p]
    if q == c or (q >= 0 and not gone[q]):
        return False
    if where[p] == where[c]:
        col = cols[where[c]]
        if height[p] > height[c]:
            # p lies over c: p or a card between them must move onto a column first.
            return any(moved[b] for b in col[height[c] + 1:height[p] + 1])
        # p lies under c: a card between them must move onto a column first (with c on it).
        return any(moved[b] for b in col[height[p] + 1:height[c]])
    return True


def _holds(p: int, card: int, above: list[int], home: list[bool], gone: list[bool]) -> bool:
    """Whether ``card`` may lie on place ``p`` by now: p is not home and was free at some time
    (no card on it in the position, or ``card`` itself, or that card has moved)."""
    if home[p]:
        return False
    q = above[p]
    return q < 0 or q == card or gone[q]


def yukon_twins_blocked(cols: list[list[int]], down: list[int], found: list[int]) -> bool:
    """Whether the position is lost by *twins' places* (issue 20, fourth part): for some pair
    of twins (same rank and colour, so the same two places), the waiting events of
    :func:`yukon_blocked` leave a card unable to go home whichever twin lies on a place first.

    A card c that is not a King lies on one of its two places from its first move onto a
    column, M(c), until it goes home, H(c): it moves only onto one of them or home, and a move
    of cards under it carries the card it lies on along. So does a card that lies on one of
    them in the position, from now on. Call the time c begins to lie on a place its *start*
    (now, or M(c)). In any won line, for twins c and t, either (A) c starts no later than t, or
    t never starts; or (B) t starts before c, or c never starts. In case (A), when t first
    moves onto a column, M(t), before H(c), c lies on one of the two places, pa, and t goes
    onto the other, pb: pb qualifies for t as in :func:`yukon_blocked`, and pa is not home and
    was free when c went onto it, so the card lying on pa in the position has moved by then
    (or pa had none, or it is c, which lies on it now). So in case (A), M(t) needs H(c), or, for
    one of the two ways of naming the places, pb qualifies for t and pa is held that way
    (:func:`_holds`). These requirements come before M(t) in the line, so the rules with this
    one added still reach every event of any line of case (A), and symmetrically for (B). When
    both sets of rules leave some card unable to go home, no line of either case wins: the
    position is lost.

    The rules of :func:`yukon_blocked` alone let both twins use one place at once (at the root
    of benchmark deal 7836837574459283361, JS and JC both onto QD, 9S and 9C onto TH, 8S and 8C
    onto 9D): twice the rounds per pair, up to 24 pairs, so the search runs it only at the root
    (``YukonEngine.moves``).
    """
    present = [False] * 52
    for col in cols:
        for c in col:
            present[c] = True
    for s in (0, 2):  # clubs and hearts; the twin is the spade or the diamond
        for r in range(KING):
            c = s * 13 + r
            t = _TWIN[c]
            if (present[c] and present[t] and _waiting(cols, down, found, c, t)
                    and _waiting(cols, down, found, t, c)):
                return True
    return False
