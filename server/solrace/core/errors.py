"""Every code a refusal carries: the ``code`` of an ``error`` reply, and of an HTTP answer's
``error`` body.

One enum for the whole server, in the core because the core refuses most commands
(:class:`~solrace.core.race_parts.RaceError`,
:class:`~solrace.core.tournament_parts.TournamentError`) and sits under the protocol, which
refuses the rest (:class:`~solrace.protocol.codec.ProtocolError`) and renders every one
(:mod:`solrace.protocol.errors`). A member is its wire string (a ``StrEnum``): the wire is the
same as when the codes were bare strings. When each is sent: the table of docs/protocol.md
("Errors"), which ``tests/protocol/test_error_codes.py`` holds to this enum both ways.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """An error code; its value is what goes on the wire."""

    BAD_MESSAGE = "bad_message"
    NOT_FOUND = "not_found"
    FORBIDDEN = "forbidden"
    RACE_FULL = "race_full"
    RACE_NOT_RUNNING = "race_not_running"
    ILLEGAL_MOVE = "illegal_move"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    RACE_NOT_OVER = "race_not_over"
    BAD_SEQ = "bad_seq"
    RACE_STARTED = "race_started"
    NO_RACERS = "no_racers"
    LIMIT_REACHED = "limit_reached"
    PAUSED = "paused"
    CLOSED = "closed"
    SEAT_WAITING = "seat_waiting"
    NO_SHOW = "no_show"
    INTERNAL = "internal"
    NAME_TAKEN = "name_taken"
    NAME_RESERVED = "name_reserved"
    # the tournaments' and arenas'
    ENTRY_CLOSED = "entry_closed"
    TOURNAMENT_FULL = "tournament_full"
    TOURNAMENT_STARTED = "tournament_started"
    TOURNAMENT_OVER = "tournament_over"
    NOTHING_WAITING = "nothing_waiting"
    # HTTP only
    BAD_REQUEST = "bad_request"
