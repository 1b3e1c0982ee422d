"""One click to a race: quick-race pairing (``seek``, ``cancel_seek``) and *Play a bot*
(``play_bot``).

A seeker is put in the queue of his game and time limit (rated or casual), or paired at once
with the best waiting seeker; every ``PASS_EVERY_S`` a pass pairs the waiting seekers whose
windows have grown to fit each other (the rule, and one seek per player:
:mod:`solrace.core.pairing`). The process that pairs two seekers makes their race
(:func:`solrace.core.rooms.seated_race`: both seated, it counts down once both sat) and,
once it is durable, tells both (``paired``, with each one's token), wherever their connections
are. Nobody within ``bot_after`` seconds: the seeker's own process takes him out of the queue
— if he is still there; if another process paired him meanwhile, his ``paired`` is on its way
— and seats a house bot of about his strength instead.

**Rated play needs an account.** A rated ``seek`` or ``play_bot`` from a guest (a player
without a password) is casual; its replies say so (``"rated": false, "casual": "guest"``). A
rated request of an account first passes :attr:`Matchmaker.rated_gate`, if set (it raises
RaceError to refuse).

**No-shows.** A paired quick race whose seats were not all taken within the grace ends at once
(``reason: "no_show"``, unrated: :class:`solrace.core.race.Race`): nobody races alone. Then
(:meth:`Matchmaker.race_over`) the racer who sat goes back to the head of his queue for his
next seek there (the page seeks again at once), and the one who did not sit may not seek for
``NO_SHOW_PAUSE_S`` (his seek now, if any, is dropped: ``seek_ended``).

**A seek outlives its page by a moment.** A connection that closes while it seeks leaves its
seek in the queue for ``SEEK_GRACE_S`` (a page reloading): a new connection of the same
player that seeks the same queue with ``resume`` takes it over, its time waited kept
(``seeking`` tells ``since``), on whichever process it lands; one paired meanwhile gets its
seat (``paired``) instead. Nobody takes it over within the grace: it leaves the queue.

The queues (:class:`Queues`) are this process's (:class:`LocalQueues`, the embedded server)
or Redis's (:class:`solrace.cluster.queues.RedisQueues`, shared by every process: a seeker is
taken out in the same script that pairs him, so nobody is paired twice; one taken by a process
that died before it made the race goes back to the queue).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from solrace.core import rooms
from solrace.core.identity import Who
from solrace.core.levels import LEVELS, Level, bot_name, closest
from solrace.core.pairing import MemoryQueues, Offer, Seek, is_rated, queue_name, queue_parts
from solrace.core.quotas import client_key
from solrace.core.race import Race
from solrace.core.race_parts import Options, RaceError
from solrace.core.rating import MU
from solrace.core.rooms import Seat
from solrace.protocol import codec, commands, messages
from solrace.settings import PASS_EVERY_S, QUEUE_CAP, SEEK_GRACE_S

if TYPE_CHECKING:
    from solrace.service.accounts import Accounts
    from solrace.service.house_bots import HouseBots
    from solrace.service.hub import Hub

log = logging.getLogger(__name__)

Message = dict[str, Any]


class Seeker(Protocol):
    """A connection, as far as pairing is concerned."""

    id: int
    address: str
    key: str | None
    who: Who | None

    def send(self, msg: dict[str, Any], urgent: bool = True) -> None: ...
    seek: Any


class Queues(Protocol):
    async def offer(self, seek: Seek, now: int) -> Offer:
        """Replace the player's previous seek, then pair ``seek`` with a waiting seeker
        (taken out of the queue) or queue him (:class:`~solrace.core.pairing.Offer`)."""

    async def pair_waiting(self, now: int) -> list[tuple[Seek, Seek]]:
        """One pass over every queue: the pairs that fit now, taken out of their queues."""

    async def cancel(self, seek: Seek) -> bool:
        """Take ``seek`` out of his queue: True if he was still waiting."""

    async def confirm(self, seek: Seek) -> None:
        """The race of ``seek``, paired by this process, is made."""

    async def take_over(self, player: str, queue: str, process: str, conn: int,
                        new_id: str) -> tuple[Seek, Seek] | None:
        """The player's seek waiting in ``queue``, now connection ``conn`` of ``process``'s
        under ``new_id`` (its time waited kept): as it was and is; or None (see
        MemoryQueues.take_over)."""

    async def give_back(self, seek: Seek) -> bool:
        """The race of ``seek`` could not be made: he waits again (unless the player seeks
        something else meanwhile)."""

    async def no_show(self, queue: str, present: list[str], absent: list[str],
                      now: int) -> list[Seek]:
        """A quick race of ``queue`` ended with seats not taken: ``present`` back at the
        head of it, ``absent`` barred; the absent players' seeks, dropped."""

    async def seated(self, players: list[str], race: str, now: int) -> None:
        """``players`` were paired into ``race`` now: their seats wait for them."""

    async def seat_of(self, player: str, now: int) -> str | None:
        """The race the player was paired into less than ``SEAT_GRACE_S`` ago, if any."""

    async def alive(self, process: str) -> bool:
        """Does the process holding a seeker's connection still run?"""


class LocalQueues:
    """The embedded server's queues (:class:`~solrace.core.pairing.MemoryQueues`)."""

    def __init__(self, cap: int = QUEUE_CAP) -> None:
        self.queues = MemoryQueues(cap)

    async def offer(self, seek: Seek, now: int) -> Offer:
        return self.queues.offer(seek, now)

    async def pair_waiting(self, now: int) -> list[tuple[Seek, Seek]]:
        return self.queues.pair_waiting(now)

    async def cancel(self, seek: Seek) -> bool:
        return self.queues.cancel(seek)

    async def confirm(self, seek: Seek) -> None:
        pass

    async def take_over(self, player: str, queue: str, process: str, conn: int,
                        new_id: str) -> tuple[Seek, Seek] | None:
        return self.queues.take_over(player, queue, process, conn, new_id)

    async def give_back(self, seek: Seek) -> bool:
        return self.queues.give_back(seek)

    async def no_show(self, queue: str, present: list[str], absent: list[str],
                      now: int) -> list[Seek]:
        return self.queues.no_show(queue, present, absent, now)

    async def seated(self, players: list[str], race: str, now: int) -> None:
        self.queues.seated(players, race, now)

    async def seat_of(self, player: str, now: int) -> str | None:
        return self.queues.seat_of(player, now)

    async def alive(self, process: str) -> bool:
        return True


class Waiting:
    """A connection's seek in this process: the seek, and its bot timer."""

    def __init__(self, seek: Seek, rated: bool, time_limit: int, game: str) -> None:
        self.seek = seek
        self.rated = rated
        self.time_limit = time_limit
        self.game = game
        self.timer: asyncio.TimerHandle | None = None


class Matchmaker:
    """See the module docstring. ``deliver(process, conn, msg)`` sends a message to a
    connection of any process; ``process`` names this one."""

    def __init__(self, hub: Hub, accounts: Accounts, bots: HouseBots, queues: Queues,
                 deliver: Callable[[str, int, Message], None], process: str = "") -> None:
        self.hub = hub
        self.accounts = accounts
        self.bots = bots
        self.queues = queues
        self.deliver = deliver
        self.process = process
        #: Awaited before a rated ``seek`` or ``play_bot`` of an account (a guest's requests
        #: are casual, and never get here): raises RaceError to refuse it.
        self.rated_gate: Callable[[Who], Awaitable[None]] | None = None
        #: Seconds a closed connection's seek waits for its page to come back.
        self.seek_grace = SEEK_GRACE_S

    # ------------------------------------------------------------- commands
    async def handle(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        try:
            if cmd.action == "seek":
                await self.seek(conn, cmd)
            elif cmd.action == "cancel_seek":
                await self.cancel(conn)
                self.hub.reply_later(conn, messages.ok("", cmd.rid))
            else:
                await self.play_bot(conn, cmd)
        except RaceError as exc:
            self.hub.reply_later(conn, codec.error(exc.code, exc.message, cmd.rid, **exc.fields))
        except Exception:
            log.exception("%s failed", cmd.action)
            self.hub.reply_later(conn, codec.error("unavailable", "the server could not do "
                                                   "this now: try again", cmd.rid))

    def _game(self, game: str) -> None:
        import solrules

        if game not in solrules.GAMES:
            raise RaceError("bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}")

    async def rated(self, who: Who, asked: bool) -> tuple[bool, str | None]:
        """Is a request for a rated race (``asked``) rated, and if not although asked, why:
        a guest's is casual; an account's passes the rated gate (or raises)."""
        if not asked:
            return False, None
        if not who.account:
            return False, "guest"
        if self.rated_gate is not None:
            await self.rated_gate(who)
        return True, None

    async def seek(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        self._game(cmd.game)
        who = await self.accounts.ensure(conn)
        rated, casual = await self.rated(who, cmd.rated)
        now = self.hub.clock()
        queue = queue_name(cmd.game, cmd.time_limit, rated)
        if cmd.resume and await self._resume(conn, cmd, who, queue, now):
            return
        await self._unseated(who, now)
        await self.cancel(conn)
        mu = await self._mu(who, cmd.game)
        seek = Seek(secrets.token_hex(8), queue,
                    who.id, who.name, round(mu, 3), now, self.process, conn.id, conn.address,
                    who.rating(cmd.game), who.provisional(cmd.game),
                    network=client_key(conn.address), casual=casual or "")
        while True:  # each turn drops a seeker whose process is gone: it ends
            offer = await self.queues.offer(seek, now)
            if offer.barred_ms:
                raise RaceError("no_show", "you did not take your seat in your last quick "
                                "race: you may seek again in "
                                f"{-(-offer.barred_ms // 1000)} s")
            if offer.replaced is not None:
                self._ended(offer.replaced, "replaced")
            if offer.full:
                raise RaceError("limit_reached", "too many players are waiting for this race: "
                                "try again in a moment")
            seek, match = offer.seek, offer.match
            if match is None:
                break
            if not await self._alive(match):
                await self.queues.confirm(match)  # his process is gone, and he with it
                continue
            await self._pair(match, seek, held=(match,), reply=(conn, cmd.rid))
            return
        self._wait(conn, cmd, seek, rated, casual, now, now)

    def _wait(self, conn: Seeker, cmd: commands.PlayCmd, seek: Seek, rated: bool,
              casual: str | None, since: int, now: int) -> None:
        """``seek`` waits in its queue for ``conn`` since ``since``: its bot's timer
        (``bot_after`` seconds from then), and ``seeking``."""
        waiting = Waiting(seek, rated, cmd.time_limit, cmd.game)
        conn.seek = waiting
        bot_at = None
        if cmd.bot_after > 0:
            bot_at = since + cmd.bot_after * 1000
            waiting.timer = asyncio.get_running_loop().call_later(
                max(0.0, (bot_at - now) / 1000), lambda: self.hub.supervisor.spawn(
                    self._no_one_came(conn, waiting), f"bot for seeker {conn.id}"))
        self.hub.reply_later(conn, messages.seeking(cmd.game, cmd.time_limit, rated, bot_at,
                                                    casual, cmd.rid, since=since))

    async def _resume(self, conn: Seeker, cmd: commands.PlayCmd, who: Who, queue: str,
                      now: int) -> bool:
        """``seek`` with ``resume``: this player's seek in ``queue``, left by a page that
        closed a moment ago, is this connection's now (True, answered); or, paired meanwhile,
        his seat in that race (True, answered ``paired``); else False (a new seek)."""
        await self.cancel(conn)
        moved = await self.queues.take_over(who.id, queue, self.process, conn.id,
                                            secrets.token_hex(8))
        if moved is not None:
            old, seek = moved
            if (old.process, old.conn) != (self.process, conn.id):
                self._ended(old, "replaced")  # another tab of his, if it is still open
            self._wait(conn, cmd, seek, is_rated(queue), seek.casual or None, seek.since, now)
            return True
        race_id = await self.queues.seat_of(who.id, now)
        race = None if race_id is None else await self.hub.load(race_id)
        if race is None or race.status != "lobby":
            return False
        mine = next((r for r in race.racers.values() if r.pid == who.id and not r.ready), None)
        if mine is None:
            return False
        others = [r for r in race.racers.values() if r is not mine]
        self.hub.reply_later(conn, messages.paired(race, mine, others, cmd.rid))
        return True

    async def _mu(self, who: Who, game: str) -> float:
        store = self.accounts.store
        if store is None:
            return MU
        rating = (await store.ratings(who.id)).get(game)
        return MU if rating is None else rating.mu

    async def _unseated(self, who: Who, now: int) -> None:
        """A player paired a moment ago may not seek again before he took his seat (or the
        grace to take it is over): else one player could be paired with every newcomer in
        turn, and never come. RaceError ``seat_waiting``."""
        race_id = await self.queues.seat_of(who.id, now)
        if race_id is None:
            return
        race = await self.hub.load(race_id)
        if race is not None and race.status == "lobby" and any(
                r.pid == who.id and not r.ready for r in race.racers.values()):
            raise RaceError("seat_waiting", "you were paired a moment ago: take your seat in "
                            "that race first")

    async def _alive(self, seek: Seek) -> bool:
        return seek.process == self.process or await self.queues.alive(seek.process)

    def _ended(self, seek: Seek, reason: str) -> None:
        """Tell a seek's connection that it left its queue (``seek_ended``)."""
        self.deliver(seek.process, seek.conn, messages.seek_ended(reason))

    async def cancel(self, conn: Seeker) -> None:
        """Leave the queue (nothing if the connection does not seek)."""
        waiting: Waiting | None = conn.seek
        if waiting is None:
            return
        conn.seek = None
        if waiting.timer is not None:
            waiting.timer.cancel()
        await self.queues.cancel(waiting.seek)

    def seated(self, conn: Seeker) -> None:
        """``conn``'s player got a seat by other means (a challenge accepted): its seek, if
        any, leaves the queue and the page is told (``seek_ended`` ``seated``); else one
        player would hold two seats, and miss one."""
        if conn.seek is None:
            return
        self.hub.supervisor.spawn(self.cancel(conn), f"seek of seated {conn.id}", timeout=10)
        self.hub.reply_later(conn, messages.seek_ended("seated"))

    def closed(self, conn: Seeker) -> None:
        """A connection closed: its seek, if any, leaves the queue after ``seek_grace``
        seconds unless another connection of the player took it over meanwhile (a page
        reloading: see the module docstring); its bot does not come."""
        waiting: Waiting | None = conn.seek
        if waiting is None:
            return
        conn.seek = None
        if waiting.timer is not None:
            waiting.timer.cancel()

        self.hub.supervisor.spawn(self._leave_later(waiting.seek), f"seek of closed {conn.id}",
                                  timeout=self.seek_grace + 30)

    async def _leave_later(self, seek: Seek) -> None:
        """The seek of a closed connection leaves its queue after the grace — by its id: a
        seek taken over has a new one, and stays."""
        await asyncio.sleep(self.seek_grace)
        await self.queues.cancel(seek)

    # -------------------------------------------------------------- pairing
    async def passes(self) -> None:
        """Every ``PASS_EVERY_S``, a pass over the waiting seekers (:meth:`pair_waiting`),
        until cancelled. A pass that fails (Redis unreachable) is logged; the next one tries
        again."""
        while True:
            await asyncio.sleep(PASS_EVERY_S)
            try:
                await self.pair_waiting()
            except Exception as exc:
                log.warning("pairing pass failed: %s", exc)

    async def pair_waiting(self) -> int:
        """Pair the waiting seekers who fit each other now, and make their races (one after
        the other). How many races."""
        made = 0
        for a, b in await self.queues.pair_waiting(self.hub.clock()):
            alive = [await self._alive(a), await self._alive(b)]
            if not all(alive):  # a seeker of a process that is gone: the other waits again
                for seek, ok in zip((a, b), alive, strict=True):
                    if ok:
                        await self.queues.give_back(seek)
                    else:
                        await self.queues.confirm(seek)
                continue
            try:
                await self._pair(a, b, held=(a, b))
                made += 1
            except RaceError as exc:
                if exc.code != "unavailable":
                    # The race counts in a's share (he waited longest): over it (or over the
                    # server's cap), his seek ends with the reason; b waits on (given back).
                    await self.queues.cancel(a)
                    self.deliver(a.process, a.conn, codec.error(exc.code, exc.message))
                log.info("a paired race could not be made: %s", exc.message)
            except Exception as exc:  # both wait again (_pair gave them back)
                log.warning("a paired race could not be made: %s", exc)
        return made

    async def _pair(self, first: Seek, second: Seek, held: tuple[Seek, ...],
                    reply: tuple[Seeker, Any] | None = None) -> None:
        """Make the race of ``first`` and ``second`` (``held``: those this process took out
        of the queue; they wait again if the race cannot be made) and tell both. ``reply``:
        the connection of ``second`` when he is the one who just sought (his ``rid``); the
        race counts in his share of races, else in ``first``'s, who waited longest."""
        game, time_limit, rated = queue_parts(first.queue)
        options = Options(players=2, time_limit=time_limit, rated=rated, kind="quick")
        # A rated queue holds accounts only (a guest's seek goes to the casual one).
        seats = [Seat(s.name, s.player, s.shown, provisional=s.provisional,
                      net=self.hub.net(s.address), account=rated)
                 for s in (first, second)]
        try:
            race = await self._make(second.address if reply else first.address, game,
                                    options, seats)
        except BaseException:
            for seek in held:
                await self.queues.give_back(seek)
            raise
        for seek in held:
            await self.queues.confirm(seek)
        racers = [race.racers["p1"], race.racers["p2"]]
        for i, seek in enumerate((first, second)):
            you, other = racers[i], racers[1 - i]
            if reply is not None and seek is second:
                self.hub.reply_later(reply[0], messages.paired(race, you, [other], reply[1],
                                                               seek.casual or None))
            else:
                self.deliver(seek.process, seek.conn,
                             messages.paired(race, you, [other], casual=seek.casual or None))
        try:
            await self.queues.seated([first.player, second.player], race.race,
                                     self.hub.clock())
        except Exception as exc:  # they are told; only the check of a new seek is missed
            log.warning("cannot note the seats of race %s: %s", race.race, exc)

    async def _make(self, address: str, game: str, options: Options, seats: list[Seat],
                    **extra: Any) -> Race:
        """Create a seated race and wait until it is durable."""
        hub = self.hub
        race, out = rooms.seated_race(hub, address, game, options, seats, hub.clock(),
                                         **extra)
        await hub.open_seated(race, out)
        return race

    # ------------------------------------------------------------- no-shows
    def race_over(self, race: Race) -> None:
        """A race of this process ended (the hub says so). A quick race that ended because a
        player never took his seat while the other did: see the module docstring."""
        if race.options.kind != "quick" or race.reason != "no_show":
            return
        humans = [r for r in race.racers.values() if r.pid is not None and not r.bot]
        present = [r.pid for r in humans if r.ready and r.pid is not None]
        absent = [r.pid for r in humans if not r.ready and r.pid is not None]
        if present and absent:
            queue = queue_name(race.game, race.options.time_limit, race.options.rated)
            self.hub.supervisor.spawn(self._no_show(queue, present, absent),
                                      f"no-show in {race.race}", timeout=30)

    async def _no_show(self, queue: str, present: list[str], absent: list[str]) -> None:
        for seek in await self.queues.no_show(queue, present, absent, self.hub.clock()):
            self._ended(seek, "no_show")

    # --------------------------------------------------------- house bots
    async def _no_one_came(self, conn: Seeker, waiting: Waiting) -> None:
        """``bot_after`` passed: take the seeker out of the queue, if he still waits there,
        and seat a house bot of about his strength instead."""
        if conn.seek is not waiting:
            return
        if not await self.queues.cancel(waiting.seek):
            return  # paired (or replaced) meanwhile: his ``paired`` is on its way
        conn.seek = None
        level = closest(waiting.seek.rating, solver=self.bots.can_play(LEVELS[3]))
        try:
            await self._bot_race(conn, waiting.game, waiting.time_limit, waiting.rated, level,
                                 kind="quick", casual=waiting.seek.casual or None)
        except RaceError as exc:
            self.hub.reply_later(conn, codec.error(exc.code, exc.message, **exc.fields))

    async def play_bot(self, conn: Seeker, cmd: commands.PlayCmd) -> None:
        self._game(cmd.game)
        level = LEVELS[cmd.level]
        if not self.bots.can_play(level):
            raise RaceError("unavailable", f"the {level.name} bot needs the server's solver, "
                            "which is off here")
        who = await self.accounts.ensure(conn)
        rated, casual = await self.rated(who, cmd.rated)
        await self.cancel(conn)
        await self._bot_race(conn, cmd.game, cmd.time_limit, rated, level, kind="bot",
                             rid=cmd.rid, casual=casual)

    async def _bot_race(self, conn: Seeker, game: str, time_limit: int, rated: bool,
                        level: Level, kind: str, rid: Any = None,
                        casual: str | None = None) -> None:
        who = conn.who
        assert who is not None
        self.bots.admit(conn.address)
        options = Options(players=2, time_limit=time_limit, rated=rated, kind=kind)
        seats = [Seat(who.name, who.id, who.rating(game), provisional=who.provisional(game),
                      net=self.hub.net(conn.address), account=who.account),
                 Seat(bot_name(level), bot=True, level=level.level, ready=True)]
        race = await self._make(conn.address, game, options, seats)
        self.bots.start(race, "p2", conn.address)
        you, bot = race.racers["p1"], race.racers["p2"]
        self.hub.reply_later(conn, messages.paired(race, you, [bot], rid, casual))
