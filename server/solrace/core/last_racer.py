"""The last one racing: a race whose other racers are all done does not hold its last racer,
nor everyone waiting on him, for the whole time limit.

Once every other racer of a race of two or more has finished or resigned and the one still
racing is a person (not a bot), he races against his own idleness as well as the clock: if he
makes no move or undo for the race's ``last_idle_ms`` — counted from when he became the last
one, or from his last action since — the race ends then (reason ``idle``), for him as if its
time had run out: his cards home as they stand. Why: his place can hardly change any more
(those who finished are ahead of anyone finishing later, those who resigned are behind him),
while the others wait on him for their results, and a tournament's round or an arena's next
pairing with them; a racer who left his tab open and walked away is connected, so the rule for
racers who left (two minutes without a connection) never ends the race, and he would hold
them all for the rest of the time limit. A racer who plays, however slowly, keeps racing.

Pure functions of the race's state (the race calls them; nothing here reads a clock), so that
replaying a race's log ends it at the same time. A race stored before the rule has
``last_idle_ms`` 0: it replays as it was played.
"""

from __future__ import annotations

from typing import Protocol

from solrace.core.racer import Racer


class RaceState(Protocol):
    """What the rule reads of a race (:class:`solrace.core.race.Race`)."""

    racers: dict[str, Racer]
    last_idle_ms: int
    last_since: int | None

    @property
    def status(self) -> str: ...

    def still_racing(self) -> list[Racer]: ...


def left(race: RaceState) -> Racer | None:
    """The one racer still racing, when the rule applies to him (see the module); else None."""
    if not race.last_idle_ms or race.status != "running" or len(race.racers) < 2:
        return None
    racing = race.still_racing()
    if len(racing) != 1 or racing[0].bot:
        return None
    return racing[0]


def ends_at(race: RaceState) -> int | None:
    """When the race ends unless its last racer acts before (unix ms), or None."""
    racer = left(race)
    if racer is None or race.last_since is None:
        return None
    last = racer.times[-1] if racer.times else race.last_since
    return max(race.last_since, last) + race.last_idle_ms


def view(race: RaceState) -> dict[str, object] | None:
    """``{player, ends_at, idle_ms}`` while the rule holds the race (snapshots, the API)."""
    end = ends_at(race)
    racer = left(race)
    if end is None or racer is None:
        return None
    return {"player": racer.player, "ends_at": end, "idle_ms": race.last_idle_ms}
