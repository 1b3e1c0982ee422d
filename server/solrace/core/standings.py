"""A race's standings: a racer's result as a sort key, the places (equal results share one), and
the table every follower reads (the contract: docs/protocol.md, "Standings")."""

from __future__ import annotations

from solrace.core.race_parts import Message
from solrace.core.racer import Racer


def time_of(racer: Racer, started_at: int | None) -> int | None:
    """The racer's time from the start to his finish, if he finished."""
    if racer.finished_at is None or started_at is None:
        return None
    return racer.finished_at - started_at


def rank_of(racer: Racer, started_at: int | None) -> tuple[int, int, int]:
    """The racer's result as a sort key (smaller is better); equal keys share a place.

    Finishers first, by time plus the hints' penalty; then everyone who did not finish and did
    not resign, by cards home less one per hint (desc), then by when he reached his count, plus
    the same penalty; then those who resigned, in the same order: a resign is a loss, whatever
    the cards.
    """
    if racer.finished_at is not None:
        return (0, (time_of(racer, started_at) or 0) + racer.penalty_ms, 0)
    return (2 if racer.resigned else 1, racer.hints - racer.game.progress()[0],
            racer.reached_at + racer.penalty_ms)


def places_of(racers: dict[str, Racer], started_at: int | None) -> dict[str, int]:
    """Every racer's place as things stand: 1 + the number of racers with a better result
    (so equal results share a place, and the next place is skipped)."""
    ranks = {p: rank_of(r, started_at) for p, r in racers.items()}
    return {p: 1 + sum(1 for other in ranks.values() if other < mine)
            for p, mine in ranks.items()}


def table_of(racers: dict[str, Racer], started_at: int | None, finished: bool) -> list[Message]:
    """Every racer by place; equal places in join order (``racers``' order); once the race is
    ``finished``, an aborted racer says so."""
    places = places_of(racers, started_at)
    order = list(racers)
    ranked = sorted(racers.values(), key=lambda r: (places[r.player], order.index(r.player)))
    table: list[Message] = []
    for racer in ranked:
        table.append(
            {
                "player": racer.player,
                "name": racer.name,
                "place": places[racer.player],
                "progress": racer.progress(),
                "time_ms": time_of(racer, started_at),
                "penalty_ms": racer.penalty_ms,
                "resigned": racer.resigned,
                "bot": racer.bot,
                "hints": racer.hints,
                **racer.identity(),
            }
        )
        if finished and racer.aborted:
            table[-1]["aborted"] = True
    return table
