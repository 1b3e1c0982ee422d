"""Quick-race pairing: who is paired with whom, and the queues of one process. Pure: time
comes in as an argument (unix ms). With several processes the queues are Redis's
(:mod:`solrace.cluster.queues`), where the same rule runs in Lua scripts: keep the two in step
(``tests/solrace/test_player_stores.py`` runs both on the same random queues).

**One seek per player.** A queue is a game, a time limit, and rated or casual. A player has at
most one seek in all the queues, whatever the number of his connections: a new seek replaces
the old one (which is handed back, so that its connection can be told).

**Who fits whom.** Two seekers fit if they are two players, their ratings are within the
window of the one who has waited longer — ``PAIR_WINDOW`` + ``PAIR_WIDEN`` per second waited,
anyone after ``PAIR_ANYONE_S`` — and, in a **rated** queue, they do not come from the same
network (the unit of every per-client limit, :func:`solrace.core.quotas.client_key`: two
accounts of one home or one person never play each other for rating; a casual queue pairs
them, friends in a café).

**Whom a seeker gets.** Among those who fit him, the closest rating, then whoever waited
longest, then the smaller seek id (the same in every process). In a rated queue the opponent
of his previous quick race (either way round) comes last: he is paired with him again only
when nobody else fits.

**When.** A new seeker is paired at once with the best waiting seeker (:func:`best`). And
because windows widen as seekers wait, every ``PASS_EVERY_S`` a pass over each queue
(:func:`pairs`) pairs the waiting seekers who fit now: the longest-waiting first, each with
his best among those left. So two waiting seekers are paired at the latest once the elder has
waited ``PAIR_ANYONE_S`` (and one pass).

Why two by two: a seeker should race within moments, and a wait for a third racer costs every
racer that wait; bigger races are what public races and tournaments are for.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, TypeVar

from solrace.settings import (
    BACK_AT_HEAD_S,
    LAST_OPPONENT_MS,
    NO_SHOW_PAUSE_S,
    PAIR_ANYONE_S,
    PAIR_WIDEN,
    PAIR_WINDOW,
    SEAT_GRACE_S,
)


@dataclass(frozen=True, slots=True)
class Seek:
    """One seeker in one queue: ``player`` (his id), ``rating`` (mu), since when (unix ms),
    and where his connection is (process id, connection id) to tell him. ``network``: his
    client's network (:func:`solrace.core.quotas.client_key`); ``last``: the player id of the
    opponent of his previous quick race (the queue fills it in); ``casual``: why his seek is
    casual although he asked for a rated race (``"guest"``), for his ``paired``."""

    id: str
    queue: str
    player: str
    name: str
    rating: float
    since: int
    process: str
    conn: int
    address: str = ""
    shown: int | None = None  # his shown rating, for the other's page
    provisional: bool = True
    network: str = ""
    last: str = ""
    casual: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Seek:
        """A seek as stored (JSON); fields this version does not know are ignored (a
        process of the next version may have written it)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def queue_name(game: str, time_limit: int, rated: bool) -> str:
    return f"{game}:{time_limit}:{'r' if rated else 'c'}"


def queue_parts(queue: str) -> tuple[str, int, bool]:
    """(game, time limit, rated) of a queue's name."""
    game, time_limit, kind = queue.rsplit(":", 2)
    return game, int(time_limit), kind == "r"


def is_rated(queue: str) -> bool:
    return queue.endswith(":r")


def window(waited_ms: int) -> float:
    """How far from his rating a waiting seeker accepts an opponent after ``waited_ms``."""
    if waited_ms >= PAIR_ANYONE_S * 1000:
        return float("inf")
    return PAIR_WINDOW + PAIR_WIDEN * max(0, waited_ms) / 1000


def fits(a: Seek, b: Seek, now: int, rated: bool) -> bool:
    """May ``a`` and ``b`` race each other now? (See the module docstring.)"""
    if a.player == b.player:
        return False
    if rated and a.network and a.network == b.network:
        return False
    gap = abs(a.rating - b.rating)
    return gap <= window(now - min(a.since, b.since))


def again(a: Seek, b: Seek) -> bool:
    """Did ``a`` and ``b`` race each other in their previous quick race (either's)?"""
    return a.last == b.player or b.last == a.player


def _key(seek: Seek, other: Seek, rated: bool) -> tuple[bool, float, int, str]:
    """The order in which ``seek`` prefers those who fit him (smaller first)."""
    return rated and again(seek, other), abs(other.rating - seek.rating), other.since, other.id


def best(seek: Seek, waiting: Iterable[Seek], now: int) -> Seek | None:
    """The waiting seeker a new ``seek`` is paired with, or None."""
    rated = is_rated(seek.queue)
    found: Seek | None = None
    for other in waiting:
        if fits(seek, other, now, rated) and (
                found is None or _key(seek, other, rated) < _key(seek, found, rated)):
            found = other
    return found


def pairs(waiting: Iterable[Seek], now: int) -> list[tuple[Seek, Seek]]:
    """One pass over a queue's waiting seekers: who is paired with whom now, the
    longest-waiting first, each with his best among those left (see :func:`best`).

    Cost: one sort by rating, then each seeker looks outwards from his own rating, among those
    not taken yet (a linked list: the taken are unlinked), only as far as his window and no
    further than the first who fits him and is no repeat: the seekers it walks past are those
    who cannot race him (his own network in a rated queue, his previous opponent), so a pass
    costs about n log n, not n²."""
    line = sorted(waiting, key=lambda s: (s.rating, s.since, s.id))
    n = len(line)
    if n < 2:
        return []
    rated = is_rated(line[0].queue)
    # The seekers not taken yet, in rating order: before[i] and after[i] (-1 and n: none).
    before, after = list(range(-1, n - 1)), list(range(1, n + 1))
    taken = [False] * n
    at = {s.id: i for i, s in enumerate(line)}
    out = []
    for seek in sorted(line, key=lambda s: (s.since, s.id)):
        i = at[seek.id]
        if taken[i]:
            continue
        j = _nearest(line, before, after, i, now, rated)
        if j is not None:
            for k in (i, j):
                taken[k] = True
                if before[k] >= 0:
                    after[before[k]] = after[k]
                if after[k] < n:
                    before[after[k]] = before[k]
            out.append((seek, line[j]))
    return out


def _nearest(line: list[Seek], before: list[int], after: list[int], i: int, now: int,
             rated: bool) -> int | None:
    """The best partner of ``line[i]`` (the longest-waiting seeker not taken yet, so his
    window is the widest of those left) among those not taken, by index."""
    seek = line[i]
    reach = window(now - seek.since)
    found: int | None = None  # the best who fits and is no repeat
    spare: int | None = None  # the best previous opponent who fits
    for step in (before, after):
        j = step[i]
        while 0 <= j < len(line):
            other = line[j]
            gap = abs(other.rating - seek.rating)
            if gap > reach or (found is not None
                               and gap > abs(line[found].rating - seek.rating)):
                break
            if fits(seek, other, now, rated):
                key = _key(seek, other, rated)
                if key[0]:
                    if spare is None or key < _key(seek, line[spare], rated):
                        spare = j
                elif found is None or key < _key(seek, line[found], rated):
                    found = j
            j = step[j]
    return found if found is not None else spare


# --------------------------------------------------------------------------- the queues
K = TypeVar("K")
V = TypeVar("V")


class Expiring(Generic[K, V]):
    """A map whose entries last ``ttl_ms`` from when they were last set (all the same
    lifetime, so insertion order is expiry order and :meth:`prune` only looks at the front)."""

    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = ttl_ms
        self.entries: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def set(self, key: K, value: V, now: int) -> None:
        self.entries[key] = (value, now + self.ttl_ms)
        self.entries.move_to_end(key)

    def get(self, key: K, now: int) -> V | None:
        entry = self.entries.get(key)
        if entry is None or entry[1] <= now:
            return None
        return entry[0]

    def until(self, key: K, now: int) -> int:
        """When ``key``'s entry expires (0: none)."""
        entry = self.entries.get(key)
        return 0 if entry is None or entry[1] <= now else entry[1]

    def pop(self, key: K) -> None:
        self.entries.pop(key, None)

    def prune(self, now: int) -> None:
        while self.entries:
            key, (_, until) = next(iter(self.entries.items()))
            if until > now:
                break
            del self.entries[key]


@dataclass(frozen=True, slots=True)
class Offer:
    """What came of a seek offered to the queues: ``match`` (the waiting seeker he is
    paired with, taken out of the queue) or None (he waits); ``seek`` as queued (the queue
    filled in ``last``, and ``since`` when he is back at the head); ``replaced``: the
    player's previous seek, taken out of its queue; ``full``: his queue holds ``cap``
    seekers already (he is not queued; his previous seek is gone all the same);
    ``barred_ms``: > 0 when the player may not seek now (a no-show), for that long (nothing
    else was done)."""

    seek: Seek
    match: Seek | None = None
    replaced: Seek | None = None
    full: bool = False
    barred_ms: int = 0


@dataclass
class MemoryQueues:
    """The queues of one process (the embedded server): seekers by queue in arrival order,
    each player's seek, each player's last opponent, the race of each player paired a moment
    ago (his seat waits for him), the racers left alone by a no-show (back at the head of
    their queue for a while) and the no-shows (barred for a while)."""

    cap: int
    waiting: dict[str, dict[str, Seek]] = field(default_factory=dict)
    seeks: dict[str, Seek] = field(default_factory=dict)  # player -> his seek
    last: Expiring[str, str] = field(default_factory=lambda: Expiring(LAST_OPPONENT_MS))
    back: Expiring[str, str] = field(default_factory=lambda: Expiring(BACK_AT_HEAD_S * 1000))
    barred: Expiring[str, bool] = field(
        default_factory=lambda: Expiring(NO_SHOW_PAUSE_S * 1000))
    seats: Expiring[str, str] = field(default_factory=lambda: Expiring(SEAT_GRACE_S * 1000))

    def offer(self, seek: Seek, now: int) -> Offer:
        """Pair ``seek`` now, or queue him; his previous seek, if any, leaves its queue
        first (see :class:`Offer`)."""
        until = self.barred.until(seek.player, now)
        if until:
            return Offer(seek, barred_ms=until - now)
        replaced = self.seeks.get(seek.player)
        if replaced is not None:
            self._remove(replaced)
        seek = replace(seek, last=self.last.get(seek.player, now) or "")
        if self.back.get(seek.player, now) == seek.queue:
            self.back.pop(seek.player)
            seek = replace(seek, since=min(seek.since, now - int(PAIR_ANYONE_S * 1000)))
        queue = self.waiting.setdefault(seek.queue, {})
        match = best(seek, queue.values(), now)
        if match is not None:
            self._take(match, seek, now)
            return Offer(seek, match, replaced)
        if len(queue) >= self.cap:
            return Offer(seek, None, replaced, full=True)
        queue[seek.id] = seek
        self.seeks[seek.player] = seek
        return Offer(seek, None, replaced)

    def pair_waiting(self, now: int) -> list[tuple[Seek, Seek]]:
        """One pass (:func:`pairs`) over every queue: the pairs, taken out of their queue."""
        out = []
        for name in list(self.waiting):
            queue = self.waiting[name]
            for a, b in pairs(queue.values(), now):
                self._take(a, b, now)
                out.append((a, b))
            if not queue:
                del self.waiting[name]
        for expiring in (self.last, self.back, self.barred, self.seats):
            expiring.prune(now)
        return out

    def cancel(self, seek: Seek) -> bool:
        """Take ``seek`` out of his queue: True if he was still waiting (not paired)."""
        if self.waiting.get(seek.queue, {}).get(seek.id) is None:
            return False
        self._remove(seek)
        return True

    def take_over(self, player: str, queue: str, process: str, conn: int,
                  new_id: str) -> tuple[Seek, Seek] | None:
        """The player's seek waiting in ``queue``, now his connection ``conn`` of
        ``process``'s (a page reloaded: the seek it left behind), under the id ``new_id``
        (an older connection's hold on it, by the old id, ends), its time waited kept: the
        seek as it was and as it is now; None if he has no seek waiting there."""
        old = self.seeks.get(player)
        if old is None or old.queue != queue or old.id not in self.waiting.get(queue, {}):
            return None
        self._remove(old)
        seek = replace(old, id=new_id, process=process, conn=conn)
        self.waiting[queue][seek.id] = seek
        self.seeks[player] = seek
        return old, seek

    def give_back(self, seek: Seek) -> bool:
        """``seek`` was paired but his race could not be made: he waits again, unless the
        player seeks something else meanwhile (one seek per player)."""
        if seek.player in self.seeks:
            return False
        self.waiting.setdefault(seek.queue, {})[seek.id] = seek
        self.seeks[seek.player] = seek
        return True

    def no_show(self, queue: str, present: list[str], absent: list[str],
                now: int) -> list[Seek]:
        """A quick race of ``queue`` ended because ``absent`` never took their seats:
        ``present`` go back to the head of that queue if they seek it again soon; ``absent``
        may not seek for a while, and their seeks now are dropped (returned)."""
        for player in present:
            self.back.set(player, queue, now)
        dropped = []
        for player in absent:
            self.barred.set(player, True, now)
            seek = self.seeks.get(player)
            if seek is not None:
                self._remove(seek)
                dropped.append(seek)
        return dropped

    def seated(self, players: list[str], race: str, now: int) -> None:
        """``players`` were paired into ``race`` now: their seats wait for them there for
        ``SEAT_GRACE_S``."""
        for player in players:
            self.seats.set(player, race, now)

    def seat_of(self, player: str, now: int) -> str | None:
        """The race the player was paired into less than ``SEAT_GRACE_S`` ago, if any."""
        return self.seats.get(player, now)

    def size(self, queue: str) -> int:
        return len(self.waiting.get(queue, {}))

    def _remove(self, seek: Seek) -> None:
        self.waiting.get(seek.queue, {}).pop(seek.id, None)
        mine = self.seeks.get(seek.player)
        if mine is not None and mine.id == seek.id:
            del self.seeks[seek.player]

    def _take(self, a: Seek, b: Seek, now: int) -> None:
        """``a`` and ``b`` are paired: out of their queue, each the other's last opponent."""
        for seek in (a, b):
            self._remove(seek)
        self.last.set(a.player, b.player, now)
        self.last.set(b.player, a.player, now)
