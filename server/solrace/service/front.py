"""What a connection asks of the server beyond its races: who it is (:mod:`.accounts`), a race
in one click (:mod:`.matchmaker`), a challenge (:mod:`.challenges`), the daily deal
(:mod:`.daily`), a moderator's decisions (:mod:`.moderation`). Each of these commands
waits for the player store, so each runs in a job of its own, which the connection's reader
awaits before its next command (replies stay in order)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from solrace.core.race_parts import RaceError
from solrace.protocol import codec, commands

if TYPE_CHECKING:
    from solrace.service.accounts import Accounts, Client
    from solrace.service.challenges import Challenges
    from solrace.service.daily import DailyDeals
    from solrace.service.matchmaker import Matchmaker, Seeker
    from solrace.service.moderation import Moderation
    from solrace.service.online import Online


class Front:
    def __init__(self, accounts: Accounts, matchmaker: Matchmaker,
                 daily: DailyDeals | None, moderation: Moderation | None = None,
                 challenges: Challenges | None = None, online: Online | None = None) -> None:
        self.accounts = accounts
        self.matchmaker = matchmaker
        self.daily = daily
        self.moderation = moderation
        self.challenges = challenges
        #: Which connections speak for which player (a command may have made it one).
        self.online = online

    async def handle(self, conn: Seeker, cmd: commands.ServiceCmd) -> None:
        try:
            await self._handle(conn, cmd)
        finally:
            if self.online is not None:
                self.online.track(conn)

    async def _handle(self, conn: Seeker, cmd: commands.ServiceCmd) -> None:
        if isinstance(cmd, commands.ModCmd):
            if self.moderation is None:
                self.accounts.reply(conn, codec.error(
                    "unavailable", "this server keeps no players", cmd.rid))
                return
            await self.moderation.handle(conn, cmd)
        elif isinstance(cmd, commands.PlayerCmd):
            await self.accounts.handle(conn, cmd)
        elif cmd.action == "daily":
            if self.daily is None:
                self.accounts.reply(conn, codec.error(
                    "unavailable", "this server keeps no players: no daily deal", cmd.rid))
                return
            await self.daily.handle(conn, cmd)
        elif cmd.action in codec.CHALLENGE_ACTIONS:
            if self.challenges is None:
                self.accounts.reply(conn, codec.error(
                    "unavailable", "this server keeps no players: no challenges", cmd.rid))
                return
            await self.challenges.handle(conn, cmd)
        else:
            await self.matchmaker.handle(conn, cmd)

    async def refresh(self, conn: Client) -> Any:
        """Before a player joins a race: his name and ratings as they are now (the rooms
        show them). A store that does not answer leaves what the connection knew."""
        if conn.who is None:
            return
        with contextlib.suppress(RaceError):
            await self.accounts.ensure(conn)

    def closed(self, conn: Seeker) -> None:
        self.matchmaker.closed(conn)
        if self.online is not None:
            self.online.forget(conn)
