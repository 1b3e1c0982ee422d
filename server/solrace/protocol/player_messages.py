"""The players' messages (docs/protocol.md, "Players, ratings, quick races and the daily deal"):
who a connection is (``me``), a sign-in's ticket (``signed_in``), a race's new ratings
(``ratings``) and a moderator's answers — every one built here, from the core's values
(:class:`~solrace.core.identity.Player`, :class:`~solrace.core.rating.Rating`).

``GET /api/me`` answers with the same ``me`` as the socket: an HTTP body that mirrors a wire
message is built by the same function. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solrace.core.identity import Player
from solrace.core.rating import Rating

Message = dict[str, Any]


def _with_rid(msg: Message, rid: Any) -> Message:
    if rid is not None:
        msg["rid"] = rid
    return msg


def player_view(player: Player, ratings: Mapping[str, Rating]) -> Message:
    """A player as ``me`` shows him: ``account`` (and ``password``, its old name): he has a
    password; his rating in each game he played rated."""
    return {"id": player.id, "name": player.name, "password": player.password is not None,
            "account": player.password is not None, "created_at": player.created_at,
            "ratings": {g: r.as_dict() for g, r in ratings.items()}}


def me(player: Player | None, ratings: Mapping[str, Rating], anonymous: bool,
       rid: Any = None) -> Message:
    """Who the connection (or the browser, ``GET /api/me``) is: ``player`` (null until it is
    one) and ``anonymous`` (no key at all)."""
    view = None if player is None else player_view(player, ratings)
    return _with_rid({"type": "me", "player": view, "anonymous": anonymous}, rid)


def signed_in(ticket: str, name: str, rid: Any = None) -> Message:
    """A sign-in passed: the single-use ticket the page exchanges for its new key."""
    return _with_rid({"type": "signed_in", "ticket": ticket, "name": name}, rid)


def ratings(race: str, body: Mapping[str, Any]) -> Message:
    """A scored race's ratings (``body``: solrace.core.scoring's, as the store keeps it), to
    everyone following the race."""
    return {"type": "ratings", "race": race, **body}


def mod_cleared(race: str, player: str, rated: bool) -> Message:
    """``mod_clear`` done: the flagged result counts (``rated``: the race was rated now)."""
    return {"type": "ok", "action": "mod_clear", "race": race, "player": player,
            "rated": rated}


def mod_closed(player: str, done: Mapping[str, Any]) -> Message:
    """``mod_close`` done: the account is closed (``done``: the refunds and the races dropped,
    as the store reports them)."""
    return {"type": "ok", "action": "mod_close", "player": player, **done}
