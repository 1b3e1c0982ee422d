"""What a unit of several races is: a tournament (a host's rounds or bracket) or an arena (no
host, continuous pairing). Both are kept by the stores the same way — settings, a log, a
finish — and owned, written and taken over as one unit with their races (ids ``{unit}-{n}``);
the services that run them (:mod:`solrace.service.organizer`, :mod:`solrace.service.arenas`)
tell them apart by type."""

from __future__ import annotations

from solrace.core.arena import Arena
from solrace.core.tournament import Tournament

Unit = Tournament | Arena


def unit_of(race: str) -> str:
    """The unit a race belongs to (itself, or the tournament or arena before the dash)."""
    return race.split("-", 1)[0]
