"""The Kings' order proof with a byte per card (issue 20, third part), kept for the tests:
issue 32 rewrote :func:`solrules.scotch_losses.kings_order_impossible` with sets as the bits of
an int, and ``test_solver_scotch.py`` checks that the two agree on positions of real searches."""

from __future__ import annotations

KING = 12


def kings_order_impossible(fans: list[list[int]], h: list[int], ac: list[int]) -> bool:
    """The Kings' order proof as written in issue 20's third part, a byte per card: the
    reference that :func:`solrules.scotch_losses.kings_order_impossible` (sets as bits) must
    agree with."""
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
