"""Quick-race pairing: who is paired with whom. Pure; the queues that hold the seekers are
:mod:`solrace.service.matchmaker`'s (in memory, or in Redis for several processes, where the
same rule runs in a Lua script: keep the two in step).

The rule: a seeker is paired **at once** with the seeker already waiting in his queue (the same
game, time limit and rated or not) whose rating is closest to his, if the difference is within
that waiting seeker's window: ``PAIR_WINDOW`` + ``PAIR_WIDEN`` per second he has waited, and
anyone after ``PAIR_ANYONE_S``. Never with himself (the same player seeking from two tabs).
Ties go to whoever waited longest (then by seek id: the same in every process).

Why at once, and two by two: a seeker should race within moments, and with arrivals every few
seconds a wait for a third racer costs every racer that wait; bigger races are what public
races and tournaments are for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from solrace.settings import PAIR_ANYONE_S, PAIR_WIDEN, PAIR_WINDOW


@dataclass(frozen=True, slots=True)
class Seek:
    """One seeker in one queue: ``player`` (his id), ``rating`` (mu), since when (unix ms),
    and where his connection is (process id, connection id) to tell him."""

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


def queue_name(game: str, time_limit: int, rated: bool) -> str:
    return f"{game}:{time_limit}:{'r' if rated else 'c'}"


def window(waited_ms: int) -> float:
    """How far from his rating a waiting seeker accepts an opponent after ``waited_ms``."""
    if waited_ms >= PAIR_ANYONE_S * 1000:
        return float("inf")
    return PAIR_WINDOW + PAIR_WIDEN * max(0, waited_ms) / 1000


def best(seek: Seek, waiting: Iterable[Seek], now: int) -> Seek | None:
    """The waiting seeker ``seek`` is paired with, or None (see the module docstring)."""
    found: Seek | None = None
    for other in waiting:
        if other.player == seek.player:
            continue
        gap = abs(other.rating - seek.rating)
        if gap > window(now - other.since):
            continue
        if found is None or (gap, other.since, other.id) < (
                abs(found.rating - seek.rating), found.since, found.id):
            found = other
    return found


class MemoryQueues:
    """The queues of one process (the embedded server): seekers by queue, in arrival order."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.waiting: dict[str, dict[str, Seek]] = {}

    def offer(self, seek: Seek, now: int) -> Seek | None:
        """Pair ``seek`` now (the other seeker, taken out of the queue), or queue him (None).
        ValueError if his queue is full."""
        queue = self.waiting.setdefault(seek.queue, {})
        match = best(seek, queue.values(), now)
        if match is not None:
            del queue[match.id]
            return match
        if len(queue) >= self.cap:
            raise ValueError("queue full")
        queue[seek.id] = seek
        return None

    def cancel(self, seek: Seek) -> bool:
        """Take ``seek`` out of his queue: True if he was still waiting (not paired)."""
        queue = self.waiting.get(seek.queue, {})
        return queue.pop(seek.id, None) is not None

    def size(self, queue: str) -> int:
        return len(self.waiting.get(queue, {}))
