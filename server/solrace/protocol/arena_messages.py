"""The arenas' messages (docs/protocol.md, "Arenas"): every one built here, from the arena's
state (:mod:`solrace.core.arena`).

A table is long (an arena of a thousand entrants): the messages sent to everyone following an
arena carry its first :data:`TABLE_ROWS` rows (``entrants`` says how many there are in all);
``GET /api/arenas/{arena}`` gives the whole table, and each entrant is told his own row
(``arena_you``) when it changes."""

from __future__ import annotations

from typing import Any

from solrace.core.arena import Arena, ArenaEntrant

Message = dict[str, Any]

#: Rows of the table in the messages sent to every follower.
TABLE_ROWS = 50


def watchers(aid: str) -> str:
    """The channel of the table sent to the arena's watchers (``arena_watch``) after every
    burst of results; its entrants get it on the arena's own channel, less often (with a
    thousand entrants, 20 tables a second to each was most of what the processes wrote).
    Of the arena's unit: its owner publishes there too."""
    return f"{aid}-table"


def listing(a: Arena, now: int) -> Message:
    """An arena in ``GET /api/arenas``."""
    s = a.settings
    return {"arena": a.tid, "name": s.name, "game": s.game, "status": a.status(now),
            "starts_at": s.starts_at, "ends_at": s.ends_at, "time_limit": s.time_limit,
            "rated": s.rated, "house": s.house, "players": len(a.entrants)}


def view(a: Arena, now: int, you: str | None = None, rid: Any = None,
         rows: int | None = TABLE_ROWS) -> Message:
    """The ``arena`` message: the whole view (the table's first ``rows`` rows; None: all)."""
    msg: Message = {"type": "arena", **listing(a, now), "v": a.v,
                    "standings": a.standings(rows), "entrants": len(a.entrants)}
    if you is not None:
        msg["you"] = _you(a, you)
    if rid is not None:
        msg["rid"] = rid
    return msg


def _you(a: Arena, player: str) -> Message | None:
    row = a.row(player)
    e = a.entrants.get(player)
    if row is None or e is None:
        return None
    return {**row, "race": e.racing}


def standings(a: Arena) -> Message:
    """``arena_standings``: after a race of the arena ended (the table as it stands)."""
    return {"type": "arena_standings", "arena": a.tid, "v": a.v,
            "standings": a.standings(TABLE_ROWS), "entrants": len(a.entrants)}


def over(a: Arena) -> Message:
    """``arena_over``: the final table (its first rows; the API has it whole)."""
    return {"type": "arena_over", "arena": a.tid, "v": a.v,
            "standings": a.standings(TABLE_ROWS), "entrants": len(a.entrants)}


def you(a: Arena, e: ArenaEntrant) -> Message:
    """``arena_you``: an entrant's own row and place, to him only."""
    return {"type": "arena_you", "arena": a.tid, "v": a.v, "you": _you(a, e.player)}


def created(a: Arena, rid: Any = None) -> Message:
    msg: Message = {"type": "arena_created", "arena": a.tid}
    if rid is not None:
        msg["rid"] = rid
    return msg


def joined(a: Arena, rid: Any = None) -> Message:
    msg: Message = {"type": "arena_joined", "arena": a.tid}
    if rid is not None:
        msg["rid"] = rid
    return msg
