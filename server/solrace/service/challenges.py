"""Challenges: a race of two with a friend, by his name or by a link (the rules:
:mod:`solrace.core.challenge`).

``challenge`` opens one and answers ``challenge_created`` (its ``link``, a page anyone may
open); one made for a named player reaches him at once on every page he has open, on any
process (:class:`~solrace.service.online.Online`), and a page he opens later lists it
(``challenges``). ``challenge_accept`` takes it — exactly once, whatever the processes — and
makes the race: a seated race of two (:func:`solrace.core.rooms.seated_race`, kind
``challenge``: both are told their seat, ``paired``, and it counts down once both sat; a seat not
taken within the grace ends it, ``no_show``). It is rated when the challenger asked for a rated
race and both are accounts (an account's rated request passes the matchmaker's rated gate); the
rules of rated play apply again when it is scored. ``challenge_decline`` tells the challenger
(``challenge_declined``); a named challenge ends then, a link stays open for whoever else has
it. ``challenge_cancel`` is the challenger's. At its end — ``CHALLENGE_NAMED_S`` after it was
made for a named player, ``CHALLENGE_LINK_S`` for a link — the process that made it tells the
challenger (``challenge_expired``) and the player it named (``challenge_ended``).

Held in memory: this process's (:class:`LocalBook`), or Redis's for every process
(:class:`solrace.cluster.challenges.RedisBook`). Not on disk: a restart loses the open
challenges (a minute's or a quarter of an hour's worth: they are asked again), and the expiry
timers of a process that dies go with it (its challenges still end, untold).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any, Protocol

import solrules

from solrace.core import rooms
from solrace.core.challenge import Challenge, ChallengeBook
from solrace.core.identity import Who
from solrace.core.quotas import client_key
from solrace.core.race import Race
from solrace.core.race_parts import Options, RaceError
from solrace.core.rooms import Seat
from solrace.protocol import codec, commands, messages
from solrace.settings import CHALLENGE_LINK_S, CHALLENGE_NAMED_S, CHALLENGES_PER_PLAYER

#: Expiry timers one challenger keeps in this process (his open challenges, and those taken
#: on another process whose timer here has not fired yet).
TIMERS_PER_PLAYER = 4 * CHALLENGES_PER_PLAYER

if TYPE_CHECKING:
    from solrace.service.accounts import Accounts
    from solrace.service.hub import Hub
    from solrace.service.matchmaker import Matchmaker, Seeker
    from solrace.service.online import Online

log = logging.getLogger(__name__)


class Book(Protocol):
    """Where the open challenges are (see :class:`~solrace.core.challenge.ChallengeBook`)."""

    async def open(self, ch: Challenge, now: int, check: bool = True) -> None: ...

    async def get(self, cid: str, now: int) -> Challenge | None: ...

    async def take(self, cid: str) -> Challenge | None: ...

    async def of(self, player: str, now: int) -> tuple[list[Challenge], list[Challenge]]: ...


class LocalBook:
    """The embedded server's challenges (in this process)."""

    def __init__(self) -> None:
        self.book = ChallengeBook()

    async def open(self, ch: Challenge, now: int, check: bool = True) -> None:
        self.book.open(ch, now, check)

    async def get(self, cid: str, now: int) -> Challenge | None:
        return self.book.get(cid, now)

    async def take(self, cid: str) -> Challenge | None:
        return self.book.take(cid)

    async def of(self, player: str, now: int) -> tuple[list[Challenge], list[Challenge]]:
        return self.book.of(player, now)


class Challenges:
    """See the module docstring."""

    def __init__(self, hub: Hub, accounts: Accounts, matchmaker: Matchmaker, online: Online,
                 book: Book | None = None) -> None:
        self.hub = hub
        self.accounts = accounts
        self.matchmaker = matchmaker
        self.online = online
        self.book: Book = book if book is not None else LocalBook()
        #: The expiry timers of the challenges made here, by id, and their ids by challenger
        #: (oldest first: at most TIMERS_PER_PLAYER each, see _arm).
        self.timers: dict[str, tuple[asyncio.TimerHandle, str]] = {}
        self.timers_of: dict[str, list[str]] = {}
        #: How long a challenge waits for its answer (ms): named, and a link.
        self.named_ms = CHALLENGE_NAMED_S * 1000
        self.link_ms = CHALLENGE_LINK_S * 1000

    async def handle(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        try:
            action = cmd.action
            if action == "challenge":
                await self.create(conn, cmd)
            elif action == "challenges":
                await self.listing(conn, cmd)
            else:
                cid = cmd.challenge or ""
                if action == "challenge_get":
                    await self.get(conn, cid, cmd.rid)
                elif action == "challenge_accept":
                    await self.accept(conn, cid, cmd.rid)
                elif action == "challenge_decline":
                    await self.decline(conn, cid, cmd.rid)
                else:
                    await self.cancel(conn, cid, cmd.rid)
        except RaceError as exc:
            self.hub.reply_later(conn, codec.error(exc.code, exc.message, cmd.rid,
                                                   **exc.fields))
        except Exception:
            log.exception("%s failed", cmd.action)
            self.hub.reply_later(conn, codec.error("unavailable", "the server could not do "
                                                   "this now: try again", cmd.rid))

    # ------------------------------------------------------------ commands
    async def create(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        if cmd.game not in solrules.GAMES:
            raise RaceError("bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}")
        who = await self.accounts.ensure(conn)
        rated, casual = await self.matchmaker.rated(who, cmd.rated)
        to_id = to_name = ""
        if cmd.to is not None:
            store = self.accounts.store
            found = None if store is None else await store.by_name(cmd.to)
            if found is None:
                raise RaceError("not_found", f"no player is called {cmd.to!r}")
            if found.id == who.id:
                raise RaceError("forbidden", "you cannot challenge yourself: send a link to a "
                                "friend instead")
            to_id, to_name = found.id, found.name
        now = self.hub.clock()
        ends = now + (self.named_ms if to_id else self.link_ms)
        ch = Challenge(secrets.token_urlsafe(12), who.id, who.name, cmd.game, cmd.time_limit,
                       rated, now, ends, by_rating=who.rating(cmd.game),
                       by_provisional=who.provisional(cmd.game), by_account=who.account,
                       by_net=self.hub.net(conn.address), network=client_key(conn.address),
                       to=to_id, to_name=to_name)
        await self.book.open(ch, now)
        self._arm(ch, now)
        reply = messages.challenge(ch, cmd.rid, kind="challenge_created")
        if casual is not None:
            reply["casual"] = casual
        self.hub.reply_later(conn, reply)
        if to_id:
            self.online.send(to_id, messages.challenge(ch))

    async def listing(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        """The player's open challenges (none for a connection that is no player yet: a
        visit costs nothing)."""
        if conn.who is None:
            self.hub.reply_later(conn, messages.challenges([], [], cmd.rid))
            return
        incoming, outgoing = await self.book.of(conn.who.id, self.hub.clock())
        self.hub.reply_later(conn, messages.challenges(incoming, outgoing, cmd.rid))

    async def get(self, conn: Seeker, cid: str, rid: Any) -> None:
        ch = await self._open(cid)
        who = conn.who
        you = "other" if who is None else "challenger" if who.id == ch.by else \
            "challenged" if who.id == ch.to else "other"
        self.hub.reply_later(conn, messages.challenge(ch, rid, you=you))

    async def accept(self, conn: Seeker, cid: str, rid: Any) -> None:
        ch = await self._open(cid)
        who = await self.accounts.ensure(conn)  # a visitor who opened a link: a guest now
        if who.id == ch.by:
            raise RaceError("forbidden", "this is your own challenge: send its link to a friend")
        if ch.to and ch.to != who.id:
            raise RaceError("forbidden", "this challenge is for another player")
        rated = ch.rated and who.account
        if rated and self.matchmaker.rated_gate is not None:
            await self.matchmaker.rated_gate(who)
        if not await self.online.reachable(ch.by):
            # Nobody would come to his seat: the challenge is off.
            if await self._take(cid) is not None and ch.to:
                self._tell_ended(ch, "cancelled")
            raise RaceError("not_found", f"{ch.by_name} has left: the challenge is off")
        taken = await self._take(cid)
        if taken is None:
            raise RaceError("not_found", "this challenge is no longer open")
        try:
            race = await self._race(conn, taken, who, rated)
        except Exception:
            await self.book.open(taken, self.hub.clock(), check=False)  # open again
            self._arm(taken, self.hub.clock())
            raise
        first, second = race.racers["p1"], race.racers["p2"]
        casual = None if rated or not taken.rated else "guest"
        self.hub.reply_later(conn, messages.paired(race, second, [first], rid, casual,
                                                   challenge=taken.id))
        self.matchmaker.seated(conn)
        self.online.send(taken.by, messages.paired(
            race, first, [second], casual=None if casual is None else "opponent_guest",
            challenge=taken.id), seated=True)
        if taken.to:
            self._tell_ended(taken, "accepted")

    async def decline(self, conn: Seeker, cid: str, rid: Any) -> None:
        ch = await self._open(cid)
        who = conn.who
        if ch.to:
            if who is None or who.id != ch.to:
                raise RaceError("forbidden", "this challenge is for another player")
            if await self._take(cid) is None:
                raise RaceError("not_found", "this challenge is no longer open")
            self._tell_ended(ch, "declined")
        elif who is not None and who.id == ch.by:
            raise RaceError("forbidden", "this is your own challenge: cancel it instead")
        self.online.send(ch.by, messages.challenge_answer(
            "challenge_declined", ch, by=ch.to_name if ch.to else
            (who.name if who is not None else None), open=not ch.to))
        self.hub.reply_later(conn, messages.ok("", rid))

    async def cancel(self, conn: Seeker, cid: str, rid: Any) -> None:
        ch = await self._open(cid)
        if conn.who is None or conn.who.id != ch.by:
            raise RaceError("forbidden", "only its challenger may cancel a challenge")
        if await self._take(cid) is None:
            raise RaceError("not_found", "this challenge is no longer open")
        if ch.to:
            self._tell_ended(ch, "cancelled")
        self.hub.reply_later(conn, messages.ok("", rid))

    # ------------------------------------------------------------- helpers
    async def _open(self, cid: str) -> Challenge:
        ch = await self.book.get(cid, self.hub.clock())
        if ch is None:
            raise RaceError("not_found", "this challenge is no longer open: it was taken, "
                            "cancelled, or it expired")
        return ch

    async def _take(self, cid: str) -> Challenge | None:
        """Take ``cid`` out of the book (only one caller ever gets it); its timer, if
        here, goes."""
        self._disarm(cid)
        return await self.book.take(cid)

    async def _race(self, conn: Seeker, ch: Challenge, who: Who, rated: bool) -> Race:
        """The race of an accepted challenge, both seated, durable."""
        hub = self.hub
        seats = [Seat(ch.by_name, ch.by, ch.by_rating, provisional=ch.by_provisional,
                      net=ch.by_net, account=ch.by_account),
                 Seat(who.name, who.id, who.rating(ch.game),
                      provisional=who.provisional(ch.game), net=hub.net(conn.address),
                      account=who.account)]
        options = Options(players=2, time_limit=ch.time_limit, rated=rated, kind="challenge")
        race, out = rooms.seated_race(hub, conn.address, ch.game, options, seats,
                                         hub.clock())
        await hub.open_seated(race, out)
        return race

    def _arm(self, ch: Challenge, now: int) -> None:
        """Tell its players when the challenge ends untaken (this process's timer). A timer
        goes with its challenge when it is taken here; one taken on another process leaves
        its timer here until its end, so a challenger keeps at most ``TIMERS_PER_PLAYER`` of
        them: past that, his oldest goes (its challenge was taken elsewhere, or its end is
        told by nobody)."""
        delay = max(0.0, (ch.expires_at - now) / 1000)
        handle = asyncio.get_running_loop().call_later(
            delay, lambda: self.hub.supervisor.spawn(self._expire(ch.id),
                                                     f"challenge {ch.id} ends", timeout=10))
        self.timers[ch.id] = (handle, ch.by)
        mine = self.timers_of.setdefault(ch.by, [])
        mine.append(ch.id)
        while len(mine) > TIMERS_PER_PLAYER:
            self._disarm(mine[0])

    def _disarm(self, cid: str) -> None:
        """Cancel and forget the timer of ``cid``, if this process has one."""
        entry = self.timers.pop(cid, None)
        if entry is None:
            return
        handle, player = entry
        handle.cancel()
        mine = self.timers_of.get(player, [])
        if cid in mine:
            mine.remove(cid)
        if not mine:
            self.timers_of.pop(player, None)

    async def _expire(self, cid: str) -> None:
        self._disarm(cid)
        ch = await self.book.take(cid)
        if ch is None:
            return  # taken meanwhile
        self.online.send(ch.by, messages.challenge_answer("challenge_expired", ch))
        if ch.to:
            self._tell_ended(ch, "expired")

    def _tell_ended(self, ch: Challenge, reason: str) -> None:
        """The player a named challenge was for: it is over (every page of his drops it)."""
        self.online.send(ch.to, messages.challenge_answer("challenge_ended", ch,
                                                          reason=reason))

    def close(self) -> None:
        for handle, _ in self.timers.values():
            handle.cancel()
        self.timers.clear()
        self.timers_of.clear()
