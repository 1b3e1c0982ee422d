"""Proofs that a Yukon position is lost, for :class:`solrules.solver_yukon.YukonEngine`.

Each reads the position as the engine keeps it: the columns' cards bottom to top, each
column's face-down count, and each suit's foundation height.

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
places* (:func:`yukon_twins_blocked`, at the root; since issue 32 also after a card turns up
or goes home, within a share of the search's effort): a card lies on one of its two places
from its first move onto a column until it goes home, so whichever of two twins does so first,
the other then needs the other place.

Issue 32 makes the rule cheaper, not stronger: :mod:`solrules.yukon_traps` keeps the reason it
gave for a loss (a set of events closed in that position) to prove the next positions lost
for the same reason without it, and ``_waiting`` starts its rounds in the order the events
were reached in the last position it did not prove lost (``order``; the rules are monotone,
so the order changes the cost, never the verdict).

Each argument is in its function's docstring.
"""

from __future__ import annotations

from itertools import pairwise
from typing import NamedTuple

from .cards import RANK_OF, SUIT_OF

KING = 12
#: The card of the same rank and colour in the other suit (C↔S, H↔D).
_TWIN = tuple(c + 13 if (c // 13) % 2 == 0 else c - 13 for c in range(52))
#: The two cards each card may be built on (one rank higher, other colour); -1 for a King.
PARENTS = tuple(
    ((2 if SUIT_OF[c] < 2 else 0) * 13 + RANK_OF[c] + 1,
     (3 if SUIT_OF[c] < 2 else 1) * 13 + RANK_OF[c] + 1)
    if RANK_OF[c] < KING else (-1, -1) for c in range(52))
#: No card, in :func:`_waiting`'s tables (it counts as home and gone).
_NONE = 52
#: Each card's places (PARENTS without the -1 of a King).
_PLACES = tuple(tuple(p for p in PARENTS[c] if p >= 0) for c in range(52))
#: The card below each card in its suit; _NONE for an Ace.
_BELOW = tuple(c - 1 if RANK_OF[c] else _NONE for c in range(52))
#: Whether each card is a King.
_IS_KING = tuple(RANK_OF[c] == KING for c in range(52))
#: The cards by rank, then suit: the order of _waiting's rounds.
_BY_RANK = tuple(s * 13 + r for r in range(13) for s in range(4))


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


class Reached(NamedTuple):
    """What :func:`_waiting` reached when it proved a position lost (for
    :mod:`solrules.yukon_traps`): per card, H, L and M reached, and the position's tables."""

    h: list[bool]
    gone: list[bool]
    moved: list[bool]
    above: list[int]  # the card lying on each card; _NONE for none
    hidden: list[bool]
    bottom: list[bool]
    bottoms: list[int]
    empty: bool  # E reached


class Tables(NamedTuple):
    """A position's tables, for :func:`_waiting` and :mod:`solrules.yukon_traps`."""

    above: list[int]  # the card lying directly on each card; _NONE for none (and on _NONE)
    hidden: list[bool]  # face down
    bottom: list[bool]  # a column's bottom card
    where: list[int]  # column of each card left
    height: list[int]  # and its place there (0: the bottom)
    bottoms: list[int]
    empty: bool  # a column is empty


def _tables(cols: list[list[int]], down: list[int]) -> Tables:
    above = [_NONE] * 53
    hidden = [False] * 53
    bottom = [False] * 53
    where = [-1] * 53
    height = [0] * 53
    empty = False
    bottoms: list[int] = []
    for ca, col in enumerate(cols):
        if not col:
            empty = True
            continue
        bottom[col[0]] = True
        bottoms.append(col[0])
        for x, y in pairwise(col):
            above[x] = y
        for i, c in enumerate(col):
            where[c] = ca
            height[c] = i
        for c in col[:down[ca]]:
            hidden[c] = True
    return Tables(above, hidden, bottom, where, height, bottoms, empty)


def _waiting(cols: list[list[int]], down: list[int], found: list[int], first: int,
             second: int, keep: list[Reached] | None = None,
             order: list[int] | None = None, tables: Tables | None = None) -> bool:
    """:func:`yukon_blocked`'s rules; with twins ``first`` and ``second`` (else -1), also the
    requirement of :func:`yukon_twins_blocked`'s case where ``first`` lies on a place first.
    When the position is proved lost and ``keep`` is a list, what was reached is added to it;
    ``tables``: the position's, when the caller has them already.

    The rules are monotone (an event reached never makes another unreachable), so the events
    reached do not depend on the order the cards are looked at in: any order that goes on
    until nothing new is reached gives the same verdict.
    """
    above, hidden, bottom, where, height, bottoms, empty = tables or _tables(cols, down)
    # _NONE stands for "no card" and counts as home and gone, which saves a test per look.
    home = [False] * 53
    for s in range(4):
        f = found[s]
        if f:
            home[s * 13:s * 13 + f] = [True] * f
    home[_NONE] = True
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
    # place): only those are looked at again once their H is reached. ``near``: cards with a
    # place in their own column (the only ones for which the loop reads where and height).
    needm = [False] * 52
    near = [False] * 52
    for ca, col in enumerate(cols):
        for i, c in enumerate(col):
            for p in _PLACES[c]:
                if where[p] == ca:
                    near[c] = True
                    hp = height[p]
                    for b in (col[i + 1:hp + 1] if hp > i else col[hp + 1:i]):
                        needm[b] = True
    # Rounds over the cards whose events are not all reached yet, by rank (most requirements
    # of H are the card below in the suit), until a round reaches nothing new.
    h = list(home)  # H reached (home already: before the position)
    gone = list(home)  # L reached
    moved = [False] * 52  # M reached
    missing = 52 - sum(found)  # cards whose H is not reached yet
    # ``order``: a first round in the order the events were reached in another position (a
    # card twice when its M and its H came apart); in a similar one, most are reached at once.
    pending = [c for c in (order or _BY_RANK) if not home[c]]
    log: list[int] = []
    logged = log.append
    first_round = bool(order)
    below_of, places_of, is_king = _BELOW, _PLACES, _IS_KING  # locals: looked up faster
    while missing:
        progress = False
        if not empty:
            for b in bottoms:
                if gone[b]:
                    empty = True
                    break
        rest: list[int] = []
        keep_on = rest.append
        for c in pending:
            w = above[c]
            hc = h[c]
            if not hc and h[below_of[c]] and gone[w]:
                h[c] = gone[c] = progress = hc = True
                missing -= 1
                logged(c)
                if bottom[c]:
                    empty = True
            if moved[c] or not (gone[w] or not hidden[c]):
                if not hc or (needm[c] and not moved[c]):
                    keep_on(c)
                continue
            if is_king[c]:
                can = empty and not bottom[c]
            else:
                ok = 0
                two = both[c]
                for p in places_of[c]:
                    if home[p]:
                        continue
                    q = above[p]
                    if q == c or not gone[q]:
                        continue
                    if near[c] and where[p] == where[c]:
                        col = cols[where[c]]
                        if height[p] > height[c]:
                            # p lies over c: p or a card between them must move onto a
                            # column first.
                            if not any(moved[b] for b in col[height[c] + 1:height[p] + 1]):
                                continue
                        elif not any(moved[b] for b in col[height[p] + 1:height[c]]):
                            # p lies under c: a card between them must move onto a column
                            # first (with c on it).
                            continue
                    ok += 1
                    if not two:
                        break
                can = ok == 2 or (ok == 1 and not two)
                if can and c == second and not h[first]:
                    # Twins, the first on a place (yukon_twins_blocked): the second goes onto
                    # a place that qualifies while the first holds the other.
                    p1, p2 = PARENTS[c]
                    can = ((_qualifies(c, p1, cols, above, home, gone, moved, where, height)
                            and _holds(p2, first, above, home, gone))
                           or (_qualifies(c, p2, cols, above, home, gone, moved, where, height)
                               and _holds(p1, first, above, home, gone)))
            if can:
                moved[c] = gone[c] = progress = True
                logged(c)
                if bottom[c]:
                    empty = True
                if not hc:
                    keep_on(c)
            elif not hc or needm[c]:
                keep_on(c)
        if first_round:
            # It may have left out cards: the rounds go on over every card left.
            first_round = False
            pending = [c for c in _BY_RANK if not h[c] or (needm[c] and not moved[c])]
            continue
        if not progress:
            if keep is not None:
                keep.append(Reached(h, gone, moved, above, hidden, bottom, bottoms, empty))
            return True
        pending = rest
    if order is not None:
        order[:] = log
    return False


def _qualifies(c: int, p: int, cols: list[list[int]], above: list[int], home: list[bool],
               gone: list[bool], moved: list[bool], where: list[int], height: list[int]) -> bool:
    """Whether place ``p`` lets card ``c`` move onto a column (the loop of :func:`_waiting`
    inlines it for speed)."""
    if home[p]:
        return False
    q = above[p]
    if q == c or not gone[q]:
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
    return q == card or gone[q]  # gone[_NONE]: no card on p


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
    onto 9D): twice the rounds per pair, up to 24 pairs, so the search runs it at the root and,
    within a share of its effort, after a card turns up or goes home (``YukonEngine.moves``).
    """
    return yukon_twins_pair(cols, down, found)[0] >= 0


#: The clubs and hearts but the Kings: one card of each pair of twins whose places
#: yukon_twins_blocked looks at (the twin is the spade or the diamond).
_PAIRS = tuple(s * 13 + r for s in (0, 2) for r in range(KING))


def yukon_twins_pair(cols: list[list[int]], down: list[int], found: list[int],
                     first: list[int] | None = None,
                     order: list[int] | None = None) -> tuple[int, int]:
    """:func:`yukon_twins_blocked`, saying which pair proves the loss (its club or heart, or
    -1) and how many times it ran the waiting events. The pairs of ``first`` (such cards) are
    looked at first: a search meets many positions lost by the same pair. ``order``: as for
    :func:`_waiting` (the engine passes the one its own runs keep)."""
    tables = _tables(cols, down)
    where = tables.where
    tried = first or []
    runs = 0
    for c in (*tried, *(c for c in _PAIRS if c not in tried)):
        t = _TWIN[c]
        if where[c] < 0 or where[t] < 0:
            continue
        runs += 1
        if not _waiting(cols, down, found, c, t, order=order, tables=tables):
            continue
        runs += 1
        if _waiting(cols, down, found, t, c, order=order, tables=tables):
            return c, runs
    return -1, runs
