"""One click to a race: quick-race pairing (``seek``, ``cancel_seek``) and *Play a bot*
(``play_bot``).

A seeker is put in the queue of his game and time limit (rated or not), or paired at once
with the best waiting seeker (the rule: :mod:`solrace.core.pairing`). The process that pairs
two seekers makes their race (:func:`solrace.core.dispatch.seated_race`: both seated, it counts
down once both sat) and, once it is durable, tells both (``paired``, with each one's token),
wherever their connections are. Nobody within ``bot_after`` seconds: the seeker's own process
takes him out of the queue — if he is still there; if another process paired him meanwhile,
his ``paired`` is on its way — and seats a house bot of about his strength instead.

The queues (:class:`Queues`) are this process's (:class:`LocalQueues`, the embedded server)
or Redis's (:class:`solrace.cluster.queues.RedisQueues`, shared by every process: a seeker is
taken out in the same script that pairs him, so nobody is paired twice; one taken by a process
that died before it made the race goes back to the queue).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from solrace.core import dispatch
from solrace.core.dispatch import Seat
from solrace.core.identity import Who
from solrace.core.levels import LEVELS, Level, bot_name, closest
from solrace.core.pairing import MemoryQueues, Seek, queue_name
from solrace.core.race import Race
from solrace.core.race_parts import Options, RaceError
from solrace.core.rating import MU
from solrace.protocol import codec, messages
from solrace.settings import QUEUE_CAP

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
    async def offer(self, seek: Seek, now: int) -> Seek | None:
        """Pair ``seek`` with a waiting seeker (taken out of the queue: returned) or queue
        him (None). RaceError ``limit_reached`` when his queue is full."""

    async def cancel(self, seek: Seek) -> bool:
        """Take ``seek`` out of his queue: True if he was still waiting."""

    async def confirm(self, seek: Seek) -> None:
        """The race of ``seek``, paired by this process, is made."""

    async def give_back(self, seek: Seek) -> None:
        """The race of ``seek`` could not be made: he waits again."""

    async def alive(self, process: str) -> bool:
        """Does the process holding a seeker's connection still run?"""


class LocalQueues:
    """The embedded server's queues (:class:`~solrace.core.pairing.MemoryQueues`)."""

    def __init__(self, cap: int = QUEUE_CAP) -> None:
        self.queues = MemoryQueues(cap)

    async def offer(self, seek: Seek, now: int) -> Seek | None:
        try:
            return self.queues.offer(seek, now)
        except ValueError:
            raise RaceError("limit_reached", "too many players are waiting for this race: "
                            "try again in a moment") from None

    async def cancel(self, seek: Seek) -> bool:
        return self.queues.cancel(seek)

    async def confirm(self, seek: Seek) -> None:
        pass

    async def give_back(self, seek: Seek) -> None:
        self.queues.waiting.setdefault(seek.queue, {})[seek.id] = seek

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

    # ------------------------------------------------------------- commands
    async def handle(self, conn: Seeker, cmd: codec.PlayCmd) -> None:
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

    async def seek(self, conn: Seeker, cmd: codec.PlayCmd) -> None:
        self._game(cmd.game)
        who = await self.accounts.ensure(conn)
        await self.cancel(conn)
        now = self.hub.clock()
        mu = await self._mu(who, cmd.game)
        seek = Seek(secrets.token_hex(8), queue_name(cmd.game, cmd.time_limit, cmd.rated),
                    who.id, who.name, mu, now, self.process, conn.id, conn.address,
                    who.rating(cmd.game), who.provisional(cmd.game))
        for _ in range(8):
            match = await self.queues.offer(seek, now)
            if match is None:
                break
            if match.process != self.process and not await self.queues.alive(match.process):
                await self.queues.confirm(match)  # his process is gone, and he with it
                continue
            await self._pair(conn, seek, match, cmd)
            return
        waiting = Waiting(seek, cmd.rated, cmd.time_limit, cmd.game)
        conn.seek = waiting
        bot_at = None
        if cmd.bot_after > 0:
            bot_at = now + cmd.bot_after * 1000
            waiting.timer = asyncio.get_running_loop().call_later(
                cmd.bot_after, lambda: self.hub.supervisor.spawn(
                    self._no_one_came(conn, waiting), f"bot for seeker {conn.id}"))
        msg: Message = {"type": "seeking", "game": cmd.game, "time_limit": cmd.time_limit,
                        "rated": cmd.rated, "bot_at": bot_at}
        if cmd.rid is not None:
            msg["rid"] = cmd.rid
        self.hub.reply_later(conn, msg)

    async def _mu(self, who: Who, game: str) -> float:
        store = self.accounts.store
        if store is None:
            return MU
        rating = (await store.ratings(who.id)).get(game)
        return MU if rating is None else rating.mu

    async def cancel(self, conn: Seeker) -> None:
        """Leave the queue (nothing if the connection does not seek)."""
        waiting: Waiting | None = conn.seek
        if waiting is None:
            return
        conn.seek = None
        if waiting.timer is not None:
            waiting.timer.cancel()
        await self.queues.cancel(waiting.seek)

    def closed(self, conn: Seeker) -> None:
        """A connection closed: its seek, if any, leaves the queue."""
        if conn.seek is not None:
            self.hub.supervisor.spawn(self.cancel(conn), f"cancel seek of {conn.id}")

    async def _pair(self, conn: Seeker, seek: Seek, match: Seek, cmd: codec.PlayCmd) -> None:
        """Make the race of ``match`` (waiting) and ``seek`` (this connection's)."""
        options = Options(players=2, time_limit=cmd.time_limit, rated=cmd.rated, kind="quick")
        seats = [Seat(match.name, match.player, match.shown, provisional=match.provisional),
                 Seat(seek.name, seek.player, seek.shown, provisional=seek.provisional)]
        try:
            race = await self._make(seek.address, cmd.game, options, seats)
        except BaseException:
            await self.queues.give_back(match)
            raise
        await self.queues.confirm(match)
        first, second = race.racers["p1"], race.racers["p2"]
        self.deliver(match.process, match.conn, messages.paired(race, first, [second]))
        self.hub.reply_later(conn, messages.paired(race, second, [first], cmd.rid))

    async def _make(self, address: str, game: str, options: Options, seats: list[Seat],
                    **extra: Any) -> Race:
        """Create a seated race and wait until it is durable."""
        hub = self.hub
        race, out = dispatch.seated_race(hub, address, game, options, seats, hub.clock(),
                                         **extra)
        await hub.open_seated(race, out)
        return race

    async def _no_one_came(self, conn: Seeker, waiting: Waiting) -> None:
        """``bot_after`` passed: take the seeker out of the queue, if he still waits there,
        and seat a house bot of about his strength instead."""
        if conn.seek is not waiting:
            return
        conn.seek = None
        if not await self.queues.cancel(waiting.seek):
            return  # paired by someone else meanwhile: his ``paired`` is on its way
        level = closest(waiting.seek.rating, solver=self.bots.can_play(LEVELS[3]))
        try:
            await self._bot_race(conn, waiting.game, waiting.time_limit, waiting.rated, level,
                                 kind="quick")
        except RaceError as exc:
            self.hub.reply_later(conn, codec.error(exc.code, exc.message, **exc.fields))

    async def play_bot(self, conn: Seeker, cmd: codec.PlayCmd) -> None:
        self._game(cmd.game)
        level = LEVELS[cmd.level]
        if not self.bots.can_play(level):
            raise RaceError("unavailable", f"the {level.name} bot needs the server's solver, "
                            "which is off here")
        await self.accounts.ensure(conn)
        await self.cancel(conn)
        await self._bot_race(conn, cmd.game, cmd.time_limit, cmd.rated, level, kind="bot",
                             rid=cmd.rid)

    async def _bot_race(self, conn: Seeker, game: str, time_limit: int, rated: bool,
                        level: Level, kind: str, rid: Any = None) -> None:
        who = conn.who
        assert who is not None
        self.bots.admit(conn.address)
        options = Options(players=2, time_limit=time_limit, rated=rated, kind=kind)
        seats = [Seat(who.name, who.id, who.rating(game), provisional=who.provisional(game)),
                 Seat(bot_name(level), bot=True, level=level.level, ready=True)]
        race = await self._make(conn.address, game, options, seats)
        self.bots.start(race, "p2", conn.address)
        you, bot = race.racers["p1"], race.racers["p2"]
        self.hub.reply_later(conn, messages.paired(race, you, [bot], rid))
