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
    the fans: 32), each a few passes over the cards still out, the sets of cards as bits of an
    int (issue 32: twice as fast as a byte per card, 0.17 ms a call against 0.33 on positions
    of hard fresh deals' searches, the same verdicts: ``tests/solrules/test_scotch_fresh.py``
    holds it to the byte-per-card version, kept in ``tests/solrules/scotch_order_reference.py``)."""
    # Cards numbered fan by fan, bottom to top, then the cards of the foundations that are not
    # complete: a set of cards is an int, and a fan's cards above one are a range of bits.
    types: list[int] = []
    row_of: list[int] = []  # per fan card: the bits of its fan
    kings: list[int] = []
    rows: list[int] = []
    for fan in fans:
        if not fan:
            continue
        lo = len(types)
        rm = ((1 << len(fan)) - 1) << lo
        rows.append(rm)
        for t in fan:
            if t >> 1 == KING:
                kings.append(len(types))
            types.append(t)
            row_of.append(rm)
    if not kings:
        return False
    fan_cards = len(types)
    done = [0, 0]
    for f in range(len(h)):
        if h[f] == 13:
            done[ac[f]] += 1
        else:
            for k in range(h[f]):
                types.append(k * 2 + (ac[f] ^ (k & 1)))
    n = len(types)
    found_mask = ((1 << n) - 1) & ~((1 << fan_cards) - 1)
    rank_mask = [0] * 14
    pattern_mask = [0, 0]
    pair_mask = [[0] * 13, [0] * 13]
    for x, t in enumerate(types):
        p = (t & 1) ^ ((t >> 1) & 1)
        b = 1 << x
        rank_mask[t >> 1] |= b
        pattern_mask[p] |= b
        pair_mask[p][t >> 1] |= b
    # Per fan card: the cards above it in its fan (none for the foundations' cards).
    above = [row_of[x] & ~((2 << x) - 1) for x in range(fan_cards)] + [0] * (n - fan_cards)
    failed: set[int] = set()

    def snapshot_ok(home: int, k: int) -> bool:
        c = list(done)
        at_place = is_home = out = 0
        gone = 0
        for kk, x in enumerate(kings):
            if home >> kk & 1 or kk == k:
                c[types[x] & 1] += 1
                is_home |= 1 << x
                if kk == k:
                    at_place |= row_of[x] & ((1 << x) - 1)
                    gone |= above[x]
            else:
                at_place |= row_of[x] & ((2 << x) - 1)
        most = [[2] * 13, [2] * 13]
        future = [c[0] - done[0], c[1] - done[1]]
        for p in (0, 1):
            if c[p] == 2:
                is_home |= pattern_mask[p]
                continue
            one = both = 13
            pm = pair_mask[p]
            for r in range(13):
                held = (at_place & pm[r]).bit_count()
                if held and r < one:
                    one = r
                if held == 2 and r < both:
                    both = r
            mp = most[p]
            for r in range(13):
                if c[p] == 1:
                    mp[r] = future[p] + (r < one)
                else:
                    mp[r] = (r < both) + (r < one)
            bound = 13
            for r in range(13):
                held = (at_place & pm[r]).bit_count()
                if not held:
                    continue
                if c[p] == 1:
                    if done[p]:
                        bound = min(bound, r)
                    elif held == 2:
                        return False
                    else:
                        is_home |= pm[r] & ~at_place
                elif held == 2:
                    bound = min(bound, r)
            for r in range(bound, 13):
                out |= pm[r]
        gone |= found_mask | is_home
        blocked = 0
        for rm in rows:
            a = at_place & rm
            if a:
                blocked |= rm & ((1 << (a.bit_length() - 1)) - 1)
        changed = True
        while changed:
            changed = False
            for rm in rows:
                g = gone & rm
                if g:
                    gone |= rm & ~((g & -g) - 1)
            for p in (0, 1):
                if c[p] == 2:
                    continue
                least = future[p]
                pm = pair_mask[p]
                mp = most[p]
                for r in range(12, -1, -1):
                    xs = pm[r]
                    homes = (is_home & xs).bit_count()
                    maybe = (xs & ~(out | at_place)).bit_count()
                    if homes > least:
                        least = homes
                    if homes > mp[r] or maybe < least:
                        return False
                    if homes == mp[r]:
                        new = xs & ~is_home & ~out
                        if new:
                            out |= new
                            changed = True
                    if maybe == least:
                        new = xs & ~(out | at_place) & ~is_home
                        if new:
                            is_home |= new
                            gone |= new
                            changed = True
            if is_home & (at_place | out) or at_place & gone:
                return False
            floating = out & gone
            if floating & rank_mask[KING]:
                return False
            for r in range(KING + 1):
                fl = (floating & rank_mask[r]).bit_count()
                hm = rank_mask[r + 1] & ~is_home & ~blocked if r < KING else 0
                count = hm.bit_count()
                if fl > count:
                    return False
                if fl == count:
                    new = rank_mask[r] & gone & ~out & ~is_home
                    if new:
                        is_home |= new
                        changed = True
                    if fl:
                        new = hm & ~out
                        if new:
                            out |= new
                            changed = True
                        while hm:
                            w = hm & -hm
                            hm ^= w
                            new = above[w.bit_length() - 1] & ~gone
                            if new:
                                gone |= new
                                changed = True
        return True

    full = (1 << len(kings)) - 1
    order = sorted(range(len(kings)), key=lambda k: (row_of[kings[k]] >> kings[k]).bit_length())

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
