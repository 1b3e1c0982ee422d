"""A tournament's table: places over a round's whole field and the table of the tournament, in
either format (the machine that holds what they are built from is
:class:`solrace.core.tournament.Tournament`). Pure functions of its entrants, rounds and matches.

Entrants **kept off** the places — one with a result played at machine speed (``flagged``:
:mod:`solrace.core.fairplay`), or whose account was closed for fair play (``closed``:
:mod:`solrace.service.moderation`) — are listed last, marked, with no place (``place: None``),
kept off the prizes. They stay listed rather than removed so that the table still adds up for
everyone else and shows why a place moved. A closed entrant's results also rank after every
other result of their rounds: who raced him gets the places (and round points) he took.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from solrace.core.tournament_parts import Entrant, Match, Round, shared_places

Message = dict[str, Any]


def round_places(entrants: Mapping[str, Entrant], rnd: Round,
                 closed: Collection[str] = ()) -> dict[str, int]:
    """Places over the whole field of a round (1 = best; equal results share one); the results
    of ``closed`` entrants after all the others."""
    results = [r for race in rnd.races for r in rnd.results.get(race, [])]
    results.sort(key=lambda r: (r.entrant in closed, *r.key(entrants[r.entrant].order)))
    places = shared_places([(r.entrant in closed, r.rank()) for r in results])
    return {r.entrant: place for r, place in zip(results, places, strict=True)}


def _mark(e: Entrant, flagged: Collection[str]) -> Message:
    out: Message = {}
    if e.entrant in flagged:
        out["flagged"] = True
    if e.closed:
        out["closed"] = True
    return out


def rounds_table(entrants: Mapping[str, Entrant], rounds: list[Round],
                 flagged: Collection[str]) -> list[Message]:
    """The rounds format's table: points, then cards home over all rounds, then total time of
    finished deals, then entry order; the entrants kept off (module docstring) last."""
    closed = {e.entrant for e in entrants.values() if e.closed}
    points = {e: 0 for e in entrants}
    cards = {e: 0 for e in entrants}
    time_ms = {e: 0 for e in entrants}
    per_round: dict[str, list[int | None]] = {e: [] for e in entrants}
    for rnd in rounds:
        places = round_places(entrants, rnd, closed) if rnd.over else {}
        field_size = len(rnd.entrants)
        for e in entrants:
            if e in places:
                p = field_size - places[e]
                points[e] += p
                per_round[e].append(p)
            else:
                per_round[e].append(None)
        for results in rnd.results.values():
            for r in results:
                cards[r.entrant] += r.cards
                if r.finished and r.time_ms is not None:
                    time_ms[r.entrant] += r.time_ms
    off = set(flagged) | closed
    order = sorted(entrants.values(),
                   key=lambda e: (e.entrant in off, -points[e.entrant],
                                  -cards[e.entrant], time_ms[e.entrant], e.order))
    table_places = shared_places(
        [(e.entrant in off, points[e.entrant], cards[e.entrant], time_ms[e.entrant])
         for e in order])
    return [{"entrant": e.entrant, "name": e.name, "bot": e.bot,
             "place": None if e.entrant in off else place,
             "points": points[e.entrant], "cards": cards[e.entrant],
             "time_ms": time_ms[e.entrant], "rounds": per_round[e.entrant],
             "removed": e.removed, **_mark(e, flagged)}
            for e, place in zip(order, table_places, strict=True)]


def knockout_table(entrants: Mapping[str, Entrant], matches: list[Match],
                   finished: bool) -> list[Message]:
    """The knockout's table: by the bracket round each reached (the champion first), then
    games won, then entry order; a closed entrant last, with no place (the bracket itself,
    played, stays as it was)."""
    out_round: dict[str, int] = {}
    wins: dict[str, int] = {e: 0 for e in entrants}
    for m in matches:
        for e, n in m.wins.items():
            wins[e] += n
        if m.winner is not None:
            for loser in m.entrants:
                if loser is not None and loser != m.winner:
                    out_round[loser] = m.round
    champion = None
    if finished and matches:
        final = max(matches, key=lambda m: (m.round, m.match))
        champion = final.winner
    top = max((m.round for m in matches), default=0) + 1

    def reached(e: str) -> int:
        if e == champion:
            return top + 1
        return out_round.get(e, top)

    order = sorted(entrants.values(),
                   key=lambda e: (e.closed, -reached(e.entrant), -wins[e.entrant], e.order))
    # Out in the same bracket round: the same place (the losers of the semi-finals are
    # both third), whatever games they won on the way.
    places = shared_places([(e.closed, reached(e.entrant)) for e in order])
    return [{"entrant": e.entrant, "name": e.name, "bot": e.bot,
             "place": None if e.closed else place,
             "points": wins[e.entrant], "eliminated_in": out_round.get(e.entrant),
             "removed": e.removed, **_mark(e, ())}
            for e, place in zip(order, places, strict=True)]
