"""Proofs that a Scotch position is lost, for :class:`solrules.solver_scotch.ScotchEngine`.

Each reads the position as the engine keeps it: every fan's card *types* (``rank * 2 + red``)
bottom to top, each foundation's height and the colour of its Ace.

- :func:`kings_deadlocked`: a King never moves but home, and completes its foundation then,
  so the cards under it wait for it and belong to another foundation of its colour pattern,
  whose King must go home after this one; when every way of placing those cards makes the
  Kings wait for each other in a circle, the position is lost.
- :func:`cards_stuck`: a least fixed point of which cards may still move (issue 20).
- :func:`kings_order_impossible`: the Kings' order (issue 20, third part): no order of the
  Kings going home leaves room for the other cards.

Each argument is in its function's docstring.
"""

from __future__ import annotations

import itertools

KING = 12


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
