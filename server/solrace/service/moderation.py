"""Moderators: the people who look at flagged results and decide.

A moderator is a player given the role on the command line (``solrace mod add NAME``, which
writes the store directly: no client can make itself one). The fair-play rules
(:mod:`solrace.core.fairplay`) flag a result; a flagged result is kept off ratings, the
leaderboards and the daily table until a moderator decides, on the ``/mod`` page
(``GET /api/mod/flags``: the flagged results with their signals, most suspicious first, each
with its replay), with one of two commands:

- ``mod_clear {race, player}``: the result counts after all. If it held its race's ratings and
  no other flagged result of the race waits, the rating changes are worked out now, from the
  ratings as they are now, and everyone following the race gets ``ratings``;
- ``mod_close {player, reason?}``: the account is closed for fair play: marked on its page, out
  of every table (the leaderboards and daily tables ask the store; the tournaments and arenas
  are told: :mod:`solrace.service.closures`), its held races dropped, and every opponent gets
  back the rating points he lost to it in rated races. From then on it plays no rated race,
  and a race with it rates nobody (:mod:`solrace.core.scoring`).

Both are answered ``ok`` with what was done; anyone else gets ``forbidden``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from solrace.core.errors import Code
from solrace.core.identity import Who
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.protocol import commands, messages, player_messages
from solrace.protocol.event import Event
from solrace.store.moderation_base import ModerationStore
from solrace.store.player_base import PlayerStore

log = logging.getLogger(__name__)

Message = dict[str, Any]

#: The role that may clear results and close accounts.
MODERATOR = "moderator"
#: Flagged results listed on the page at most.
FLAGS_SHOWN = 200


class Client(Protocol):
    who: Who | None


class Moderation:
    """See the module docstring. ``reply(conn, msg)``: in order with the connection's other
    replies; ``publish(race, event)``: to everyone following a race; ``race(id)``: a race held
    in memory, if any (its ``ratings`` are set when a clear applies them)."""

    def __init__(self, store: ModerationStore, players: PlayerStore, clock: Callable[[], int],
                 reply: Callable[[Any, Message], None],
                 publish: Callable[[str, Event], None],
                 race: Callable[[str], Race | None]) -> None:
        self.store = store
        self.players = players
        self.clock = clock
        self.reply = reply
        self.publish = publish
        self.race = race
        #: Called with the player's id once his account is closed here (the tables this
        #: process runs drop him at once: solrace.service.closures).
        self.on_closed: Callable[[str], object] | None = None

    async def is_moderator(self, pid: str | None) -> bool:
        return pid is not None and await self.store.role(pid) == MODERATOR

    async def handle(self, conn: Client, cmd: commands.ModCmd) -> None:
        try:
            who = conn.who
            if who is None or not await self.is_moderator(who.id):
                raise RaceError(Code.FORBIDDEN, "only a moderator can do that")
            if cmd.action == "clear":
                msg = await self.clear(cmd.race, cmd.player, who.id)
            else:
                msg = await self.close(cmd.player, who.id, cmd.reason or "fair_play")
        except RaceError as exc:
            msg = messages.error(exc.code, exc.message, cmd.rid, **exc.fields)
        except Exception:
            log.exception("moderation failed")
            msg = messages.error(Code.UNAVAILABLE, "the server cannot do this right now: try "
                                 "again", cmd.rid)
        if cmd.rid is not None:
            msg["rid"] = cmd.rid
        self.reply(conn, msg)

    async def clear(self, race_id: str, pid: str, by: str | None) -> Message:
        done = await self.store.clear(race_id, pid, by, self.clock())
        if done is None:
            raise RaceError(Code.NOT_FOUND, "no flagged result of that player in that race waits "
                            "for a decision")
        body = done["ratings"]
        if body is not None:
            race = self.race(race_id)
            if race is not None:
                race.ratings = body
            self.publish(race_id, Event(player_messages.ratings(race_id, body)))
        log.warning("moderator %s cleared %s in %s", by, pid, race_id)
        return player_messages.mod_cleared(race_id, pid, body is not None)

    async def close(self, pid: str, by: str | None, reason: str) -> Message:
        if await self.players.by_id(pid) is None:
            raise RaceError(Code.NOT_FOUND, "no such player")
        done = await self.store.close(pid, by, reason, self.clock())
        if self.on_closed is not None:
            self.on_closed(pid)
        log.warning("moderator %s closed %s for %s: %d refunds", by, pid, reason,
                    len(done["refunds"]))
        return player_messages.mod_closed(pid, done)

    async def flags(self, limit: int = FLAGS_SHOWN) -> list[Message]:
        """The ``/mod`` page's list (see the module docstring)."""
        out = []
        for r in await self.store.flagged(limit):
            out.append({k: r.get(k) for k in (
                "race", "racer", "player", "player_name", "game", "kind", "day", "at", "place",
                "racers", "time_ms", "foundation", "total", "finished", "hints", "signals",
                "held")})
        return out
