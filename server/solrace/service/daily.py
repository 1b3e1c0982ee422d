"""The daily deal: one secret deal per game per UTC day, played alone against the clock by
every player who wants, once.

The day's deal is drawn when the day's first player asks: a fresh winnable deal from the
server's private pool (:mod:`solrace.solver.pool`; a secret random deal where the server keeps
no pool), kept by the store with the first one drawn winning (two processes drawing at once
agree). Every attempt is a race of one player on that deal, with the day's salt: its
commitment is the day's. The deal is *held* (:attr:`solrace.core.shared_deal.SharedDeal.held_until`)
until every attempt of the day has ended: no seed, no boards, no replay, and nobody but the
player may follow his race, until then. Calendar, streaks, the table:
:mod:`solrace.core.daily`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import solrules

from solrace.core import daily as calendar
from solrace.core.dispatch import Seat
from solrace.core.race import Race
from solrace.core.race_parts import Options, RaceError, commitment
from solrace.protocol import codec, messages
from solrace.settings import DAILY_TIME_LIMIT
from solrace.store.player_base import PlayerStore

if TYPE_CHECKING:
    from solrace.service.accounts import Accounts, Client
    from solrace.service.hub import Hub
    from solrace.service.matchmaker import Matchmaker

log = logging.getLogger(__name__)

Message = dict[str, Any]


class DailyDeals:
    """See the module docstring."""

    def __init__(self, hub: Hub, store: PlayerStore, accounts: Accounts,
                 matchmaker: Matchmaker,
                 closed: Callable[[list[str]], Awaitable[set[str]]] | None = None) -> None:
        self.hub = hub
        self.store = store
        self.accounts = accounts
        self.matchmaker = matchmaker
        #: Which of these players' accounts are closed for fair play (out of every table).
        self.closed = closed

    def reveal_at(self, day: str) -> int:
        return calendar.reveal_at(day, DAILY_TIME_LIMIT, self.hub.countdown_ms)

    async def deal(self, game: str, day: str, draw: bool = True) -> tuple[int, str] | None:
        """The day's deal of ``game`` (seed, salt), drawn now if ``draw`` and nobody has."""
        kept = await self.store.daily(game, day)
        if kept is not None or not draw:
            return kept
        deals = self.hub.deals
        seed: int | None = None
        if deals.pool is not None:
            await deals.claim(game, 1)
            if deals.ready(game):
                seed = deals.draw(game, True)
        if seed is None:
            seed = secrets.randbits(64)  # never a public deal: a fresh secret one
        return await self.store.put_daily(game, day, seed, self.hub.entropy.salt())

    async def handle(self, conn: Client, cmd: codec.PlayCmd) -> None:
        try:
            msg = await self.play(conn, cmd.game, cmd.rid)
        except RaceError as exc:
            msg = codec.error(exc.code, exc.message, cmd.rid, **exc.fields)
        except Exception:
            log.exception("daily failed")
            msg = codec.error("unavailable", "the daily deal is not available right now: try "
                              "again", cmd.rid)
        self.hub.reply_later(conn, msg)

    async def play(self, conn: Client, game: str, rid: Any = None) -> Message:
        """The player's race on today's deal of ``game`` (made now, or his own again)."""
        if game not in solrules.GAMES:
            raise RaceError("bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}")
        who = await self.accounts.ensure(conn)
        now = self.hub.clock()
        day = calendar.day_of(now)
        deal = await self.deal(game, day)
        assert deal is not None
        seed, salt = deal
        race_id = self.hub.entropy.race_id()
        kept = await self.store.daily_attempt(game, day, who.id, race_id)
        race = await self.hub.load(kept) if kept != race_id else None
        if race is None:  # new (or its creation failed before: made now under its id)
            options = Options(players=1, time_limit=DAILY_TIME_LIMIT, kind="daily", day=day)
            seat = Seat(who.name, who.id, net=self.hub.net(conn.address), account=who.account)
            race = await self.matchmaker._make(conn.address, game, options, [seat], seed=seed,
                                               salt=salt, race_id=kept)
        mine = next((r for r in race.racers.values() if r.pid == who.id), None)
        if mine is None:
            raise RaceError("forbidden", "that race is not yours")
        return messages.paired(race, mine, [], rid)

    async def page(self, game: str, cookie: str | None) -> Message:
        """``GET /api/daily/{game}``: today's commitment and table, your streak, and
        yesterday's deal revealed with its table and replays."""
        now = self.hub.clock()
        day = calendar.day_of(now)
        deal = await self.deal(game, day, draw=False)
        results = await self.store.daily_results(game, day)
        table = calendar.table(results, await self._closed(results))
        for row in table:
            row.pop("race", None)  # no boards of today's deal until it is over
        out: Message = {
            "game": game, "day": day,
            "commitment": None if deal is None else commitment(game, deal[0], deal[1]),
            "time_limit": DAILY_TIME_LIMIT,
            "ends_at": calendar.day_start(day) + calendar.DAY_MS,
            "table": table, "you": None, "yesterday": None,
        }
        player = await self.accounts.of_cookie(cookie)
        if player is not None:
            days = await self.store.days_played(player.id, game)
            mine = [r for r in table if r["id"] == player.id]
            you: Message = {"played": bool(mine), "result": mine[0] if mine else None,
                            "streak": calendar.streak(days, day), "id": player.id,
                            "ranked": bool(mine), "account": player.password is not None}
            own = next((r for r in results if r.get("player") == player.id), None)
            if not mine and own is not None:  # played, unranked: a guest, or aborted
                you["played"] = True
                you["result"] = {k: own.get(k) for k in (
                    "time_ms", "foundation", "total", "finished", "aborted")}
                if not own.get("aborted"):
                    you["would_place"] = calendar.would_place(own, table)
            out["you"] = you
        yesterday = calendar.previous(day)
        old = await self.store.daily(game, yesterday)
        if old is not None and now >= self.reveal_at(yesterday):
            old_results = await self.store.daily_results(game, yesterday)
            out["yesterday"] = {
                "day": yesterday, "seed": str(old[0]), "salt": old[1],
                "commitment": commitment(game, old[0], old[1]),
                "table": calendar.table(old_results, await self._closed(old_results)),
            }
        return out

    async def _closed(self, results: list[Message]) -> set[str]:
        if self.closed is None:
            return set()
        return await self.closed(sorted({str(r.get("player")) for r in results}))

    def held_until(self, race: Race) -> int | None:
        """When a daily race's deal may be shown (None: not a daily race)."""
        day = race.options.day
        if race.options.kind != "daily" or day is None:
            return None
        return self.reveal_at(day)
