"""Timers on the running event loop: each race's next deadline, and throttled board views.

The rooms never read the clock: they say when they next have something to do
(``Race.next_deadline()``), and :class:`Deadlines` calls back then. :class:`Throttle` spaces
out the board views of a race (the latest board of each racer who moved wins).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

Clock = Callable[[], int]


class Deadlines:
    """One timer per race, armed for its next deadline (unix ms); ``fire(race_id)`` runs then.

    :meth:`set` is a no-op when the deadline is unchanged, which is the case after almost every
    move."""

    def __init__(self, clock: Clock, fire: Callable[[str], None]) -> None:
        self.clock = clock
        self.fire = fire
        self.timers: dict[str, tuple[int, asyncio.TimerHandle]] = {}

    def set(self, race_id: str, deadline: int | None) -> None:
        timer = self.timers.get(race_id)
        if timer is not None:
            if timer[0] == deadline:
                return
            timer[1].cancel()
            del self.timers[race_id]
        if deadline is None:
            return
        # A millisecond late rather than early: see Hub._on_deadline.
        delay = max(0.0, (deadline - self.clock()) / 1000) + 0.001
        handle = asyncio.get_running_loop().call_later(delay, self._fire, race_id)
        self.timers[race_id] = (deadline, handle)

    def _fire(self, race_id: str) -> None:
        self.timers.pop(race_id, None)
        self.fire(race_id)

    def cancel(self, race_id: str) -> None:
        self.set(race_id, None)

    def close(self) -> None:
        for _, handle in self.timers.values():
            handle.cancel()
        self.timers.clear()


class Throttle:
    """Calls ``send(race_id, players)`` at most once per race per ``interval`` seconds, with
    every racer marked since the last call: a burst of moves costs one board per racer who
    moved, the latest, instead of one per move. A race not sent to for ``interval`` is sent
    to at once, from :meth:`mark` (so a board goes out with the move's other events, in the
    same write). :meth:`flush` sends what is pending at once (the final boards after
    ``race_over``)."""

    def __init__(self, interval: float, send: Callable[[str, set[str]], None]) -> None:
        self.interval = interval
        self.send = send
        self.moved: dict[str, set[str]] = {}  # race -> racers whose board changed since
        self.sent: dict[str, float] = {}  # race -> loop time of the last send
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def mark(self, race_id: str, players: list[str]) -> None:
        moved = self.moved.get(race_id)
        if moved is None:
            self.moved[race_id] = set(players)
        else:
            moved.update(players)
        if race_id not in self.timers:
            loop = asyncio.get_running_loop()
            wait = self.sent.get(race_id, 0.0) + self.interval - loop.time()
            if wait <= 0:
                self.flush(race_id)
            else:
                self.timers[race_id] = loop.call_later(wait, self.flush, race_id)

    def take(self, race_id: str, players: list[str]) -> list[str]:
        """If ``race_id`` is due now: the racers whose boards to send with ``players`` (those
        marked since the last send too), counted as sent now by the caller; else none, and
        nothing changes (:meth:`mark` them as usual)."""
        if race_id in self.timers:
            return []
        now = asyncio.get_running_loop().time()
        if self.sent.get(race_id, 0.0) + self.interval > now:
            return []
        self.sent[race_id] = now
        return sorted(self.moved.pop(race_id, set()) | set(players))

    def flush(self, race_id: str) -> None:
        timer = self.timers.pop(race_id, None)
        if timer is not None:
            timer.cancel()
        players = self.moved.pop(race_id, None)
        if players:
            self.sent[race_id] = asyncio.get_running_loop().time()
            self.send(race_id, players)

    def forget(self, race_id: str) -> None:
        timer = self.timers.pop(race_id, None)
        if timer is not None:
            timer.cancel()
        self.moved.pop(race_id, None)
        self.sent.pop(race_id, None)

    def close(self) -> None:
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        self.moved.clear()
