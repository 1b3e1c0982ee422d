"""The daily deal: one secret deal per game per UTC day, played alone against the clock by
every player who wants, once.

The day's deal is drawn when the day's first player asks: always a fresh, secret deal the
solver has won — from the server's private pool (:mod:`solrace.solver.pool`), or, when it has
none ready (or the server keeps no pool), fresh seeds solved then and there until one is won
(:func:`solrace.solver.pool.first_won`, bounded: ``DAILY_DRAW_TRIES``, ``DAILY_DRAW_SECONDS``);
a server that runs no solver, or finds none won in time, answers ``unavailable``, never an
unchecked deal. One draw per game and day runs at a time in a process (every player asking
meanwhile waits for it), and the store keeps the first deal written (two processes drawing at
once agree). Every attempt is a race of one player on that deal, with the day's salt: its
commitment is the day's. The deal is *held* (:attr:`solrace.core.shared_deal.SharedDeal.held_until`)
until every attempt of the day has ended: no seed, no boards, no replay, and nobody but the
player may follow his race, until then. Calendar, streaks, the table:
:mod:`solrace.core.daily`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import solrules

from solrace.core import daily as calendar
from solrace.core.errors import Code
from solrace.core.race import Race
from solrace.core.race_parts import Options, RaceError, commitment
from solrace.core.rooms import Seat
from solrace.protocol import commands, messages
from solrace.settings import DAILY_DRAW_SECONDS, DAILY_DRAW_TRIES, DAILY_TIME_LIMIT
from solrace.solver.pool import first_won
from solrace.store.player_base import PlayerStore

if TYPE_CHECKING:
    from solrace.service.accounts import Accounts, Client
    from solrace.service.hub import Hub
    from solrace.service.matchmaker import Matchmaker
    from solrace.solver.jobs import Solver

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
        #: The draws running in this process, by (game, day): one at a time each.
        self._drawing: dict[tuple[str, str], asyncio.Task[tuple[int, str] | None]] = {}

    def reveal_at(self, day: str) -> int:
        return calendar.reveal_at(day, DAILY_TIME_LIMIT, self.hub.countdown_ms)

    async def deal(self, game: str, day: str, draw: bool = True) -> tuple[int, str] | None:
        """The day's deal of ``game`` (seed, salt), drawn now if ``draw`` and nobody has (see
        the module docstring): RaceError ``unavailable`` when no winnable deal can be had.
        A caller that goes away (a closed connection) leaves the draw running for the others."""
        kept = await self.store.daily(game, day)
        if kept is not None or not draw:
            return kept
        deals = self.hub.deals
        solver = self.hub.assist.solver
        if solver is None or solver.par_seconds <= 0:  # its jobs would end unknown at once
            solver = deals.pool.solver if deals.pool is not None else None
        if solver is None and (deals.pool is None or deals.demo):
            raise RaceError(Code.UNAVAILABLE, "this server runs no solver: it has no daily deal "
                            "it knows to be winnable")
        running = self._drawing.get((game, day))
        if running is None:
            running = self.hub.supervisor.spawn(
                self._draw(game, day, solver), f"draw the daily {game} deal of {day}",
                timeout=DAILY_DRAW_SECONDS)
            self._drawing[game, day] = running
            running.add_done_callback(lambda _: self._drawing.pop((game, day), None))
        try:
            kept = await asyncio.shield(running)
        except TimeoutError:
            kept = None
        if kept is None:
            raise RaceError(Code.UNAVAILABLE, "no deal known to be winnable is ready for today: "
                            "try again in a minute")
        return kept

    async def _draw(self, game: str, day: str, solver: Solver | None) -> tuple[int, str] | None:
        """One draw of the day's deal (see :meth:`deal`); None if no winnable deal was had."""
        deals = self.hub.deals
        seed: int | None = None
        if deals.pool is not None and not deals.demo:
            await deals.claim(game, 1)
            if deals.ready(game):
                seed = deals.draw(game, True)
        if seed is None and solver is not None:
            # Never a public deal, never an unchecked one: fresh secret seeds, solved.
            found = await first_won(game, solver.solve, (secrets.randbits(64)
                                                         for _ in range(DAILY_DRAW_TRIES)))
            if found is not None:
                seed = found[0]
                solver.remember(game, seed, {"verdict": "won", "moves": found[1]})
            else:
                log.warning("no %s deal won in %d tries for the daily deal", game,
                            DAILY_DRAW_TRIES)
        if seed is None:
            return None
        return await self.store.put_daily(game, day, seed, self.hub.entropy.salt())

    async def handle(self, conn: Client, cmd: commands.PlayCmd) -> None:
        try:
            msg = await self.play(conn, cmd.game, cmd.rid)
        except RaceError as exc:
            msg = messages.error(exc.code, exc.message, cmd.rid, **exc.fields)
        except Exception:
            log.exception("daily failed")
            msg = messages.error(Code.UNAVAILABLE, "the daily deal is not available right now: "
                                 "try again", cmd.rid)
        self.hub.reply_later(conn, msg)

    async def play(self, conn: Client, game: str, rid: Any = None) -> Message:
        """The player's race on today's deal of ``game`` (made now, or his own again)."""
        if game not in solrules.GAMES:
            raise RaceError(Code.BAD_MESSAGE, f"unknown game; one of {', '.join(solrules.GAMES)}")
        who = await self.accounts.ensure(conn)
        now = self.hub.clock()
        day = calendar.day_of(now)
        deal = await self.deal(game, day)
        assert deal is not None
        seed, salt = deal
        race_id = self.hub.entropy.race_id()
        kept = await self.store.daily_attempt(game, day, who.id, race_id,
                                              self.hub.net(conn.address), now)
        race = await self.hub.load(kept) if kept != race_id else None
        if race is None:  # new (or its creation failed before: made now under its id)
            options = Options(players=1, time_limit=DAILY_TIME_LIMIT, kind="daily", day=day)
            seat = Seat(who.name, who.id, net=self.hub.net(conn.address), account=who.account)
            race = await self.matchmaker._make(conn.address, game, options, [seat], seed=seed,
                                               salt=salt, race_id=kept)
        mine = next((r for r in race.racers.values() if r.pid == who.id), None)
        if mine is None:
            raise RaceError(Code.FORBIDDEN, "that race is not yours")
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
