"""The house's bots: racers the server plays itself (the home page's *Play a bot*, and the
opponent a quick-race seeker gets when nobody comes).

A house bot is a session of the hub like a connection (:class:`BotSession`): it takes its
seat with its token, is bound to its racer (so it counts as connected: nobody can claim a race
from a bot that is there), and sends its moves through the dispatcher like any client, so
every rule and every limit applies to it. It sees what any racer sees: its own board (face-up
cards only); the solver levels ask the server's solver for the next move of a winning line
from what the bot has seen, exactly as a hint is worked out, in the line of the client that
asked for the bot (the solver's time is shared by client, see
:class:`~solrace.solver.jobs.FairQueue`). Levels, paces and ratings: :mod:`solrace.core.levels`.

It runs where its race runs: a process that takes a race over (after a failover) starts the
race's house bots again (:meth:`HouseBots.adopted`); one that lets a race go stops them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
from typing import TYPE_CHECKING, Any

from solrace.bus.base import Subscription
from solrace.core.effects import Pending
from solrace.core.identity import Who
from solrace.core.levels import LEVELS, Level, choose, headway
from solrace.core.quotas import admit, client_key
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.protocol import commands, messages
from solrace.protocol.event import Event, Publishable
from solrace.settings import BOT_GIVE_UP
from solrace.solver.jobs import Solver, SolverBusy

if TYPE_CHECKING:
    from solrace.service.hub import Hub

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class BotSession:
    """One house bot in one race (see the module docstring)."""

    def __init__(self, bots: HouseBots, race: str, player: str, token: str, level: Level,
                 address: str) -> None:
        self.bots = bots
        self.hub = bots.hub
        self.race = race
        self.player = player
        self.token = token
        self.level = level
        self.id = -next(_ids)  # never a connection's id
        self.address = address
        self.players: dict[str, str] = {}
        self.seats: dict[str, str] = {}
        self.follows: dict[str, bool] = {}
        self.lean: set[str] = set()  # a house bot reads the race itself: full states
        self.who: Who | None = None
        self.subs: dict[str, Subscription] = {}
        self.wake = asyncio.Event()
        self.rng = random.Random(secrets.randbits(64))
        self.moves = 0

    # ----------------------------------------------- what the hub does to a session
    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None:
        self.wake.set()  # something happened: look at the race again

    def follow(self, race: str, boards: bool = True, lean: bool = False) -> None:
        self.follows[race] = boards
        if race not in self.subs:
            self.subs[race] = self.hub.bus.subscribe(race, self._deliver)

    def _deliver(self, event: Publishable) -> None:
        self.wake.set()

    def unfollow(self, race: str) -> None:
        self.follows.pop(race, None)
        sub = self.subs.pop(race, None)
        if sub is not None:
            sub.cancel()

    def attach(self, race: str, player: str) -> None:
        self.players[race] = player
        self.seats[race] = player

    def detach(self, race: str) -> str | None:
        return self.players.pop(race, None)

    # ------------------------------------------------------------------ playing
    async def _do(self, cmd: commands.Command) -> None:
        """Send one command through the dispatcher, as a connection would (RaceError if it
        is refused)."""
        hub = self.hub
        try:
            fx = hub.dispatch(self, cmd)
        except Pending as pending:
            fx = await hub.settle(self, cmd, pending)
        done = hub.run(self, fx)
        if done is not None:
            await done

    async def run(self) -> None:
        """Sit, then play until the bot finishes, resigns, or the race ends (or is no longer
        run here)."""
        try:
            await self._do(commands.Join(self.race, token=self.token, boards=False, bot=True))
            await self._play()
        except RaceError as exc:
            log.info("house bot in %s stops: %s", self.race, exc.message)
        finally:
            for race in list(self.players):
                self.hub.unbind(self, race)
            for race in list(self.subs):
                self.unfollow(race)

    async def _play(self) -> None:
        loop = asyncio.get_running_loop()
        best = (-1, -1)
        stale = 0
        last = loop.time()
        while True:
            race = self.hub.races.get(self.race)
            if race is None:
                return  # over, or run by another process now
            racer = race.racers[self.player]
            if racer.done:
                return
            if race.status != "running":
                self.wake.clear()
                await self.wake.wait()
                last = loop.time()
                continue
            await asyncio.sleep(max(0.0, last + self.level.pace - loop.time()))
            race = self.hub.races.get(self.race)
            if race is None or race.status != "running" or racer.done:
                continue
            state = messages.state(race, self.player)
            now = headway(state)
            if now > best:
                best, stale = now, 0
            move = await self._choose(race, state)
            last = loop.time()
            if move is None or stale >= BOT_GIVE_UP:
                await self._do(commands.Resign(self.race))
                return
            try:
                await self._do(commands.MoveCmd(self.race, move, state["seq"] + 1))
            except RaceError as exc:
                if exc.code not in ("rate_limited", "unavailable", "bad_seq", "illegal_move"):
                    raise
                continue
            self.moves += 1
            stale += 1

    async def _choose(self, race: Race, state: dict[str, Any]) -> str | None:
        legal: list[str] = state["legal"]
        if not legal:
            return None
        if self.level.policy != "solver":
            return choose(state, self.level.policy, self.rng)
        solver = self.bots.solver
        racer = race.racers[self.player]
        if solver is not None and solver.hints_on:
            try:
                answer = await solver.hint(race.game, race.seed, list(racer.actions),
                                           f"{race.race}/{self.player}",
                                           self.rng.getrandbits(32),
                                           client=client_key(self.address))
            except SolverBusy:
                answer = {}
            move = answer.get("move")
            if move in legal:
                return str(move)
        safe = [m for m in state.get("safe", []) if m in legal]
        return safe[0] if safe else choose(state, "greedy", self.rng)


class HouseBots:
    """The house bots this process plays (see the module docstring)."""

    def __init__(self, hub: Hub, solver: Solver | None) -> None:
        self.hub = hub
        self.solver = solver
        self.playing: dict[tuple[str, str], tuple[asyncio.Task[None], str]] = {}

    def can_play(self, level: Level) -> bool:
        """Is this level available here (the solver levels need a solver)?"""
        return level.policy != "solver" or (self.solver is not None and self.solver.hints_on)

    def can_play_level(self, level: int) -> bool:
        """Is level ``level`` (1-5) available here?"""
        return level in LEVELS and self.can_play(LEVELS[level])

    def admit(self, address: str) -> None:
        """Room for one more house bot, for this client (RaceError ``limit_reached``)."""
        caps = self.hub.caps
        key = client_key(address)
        held = sum(1 for _, a in self.playing.values() if a == key)
        admit("house bots", held, len(self.playing), caps.house_bots,
              caps.house_bots_per_address)

    def start(self, race: Race, player: str, address: str) -> None:
        """Play racer ``player`` of ``race`` (a house bot's seat) from now on."""
        racer = race.racers[player]
        if racer.level not in LEVELS or (race.race, player) in self.playing:
            return
        bot = BotSession(self, race.race, player, racer.token, LEVELS[racer.level], address)
        task = self.hub.supervisor.spawn(bot.run(), f"house bot {race.race}/{player}")
        key = (race.race, player)
        self.playing[key] = (task, client_key(address))
        task.add_done_callback(lambda _: self.playing.pop(key, None))

    def adopted(self, race: Race) -> None:
        """A race this process runs now (created, loaded, taken over): play its house bots
        that are still racing."""
        if race.status == "finished":
            return
        for racer in race.racers.values():
            if racer.bot and racer.level in LEVELS and not racer.done:
                self.start(race, racer.player, "")

    def stop(self, race_id: str) -> None:
        for (race, _player), (task, _) in list(self.playing.items()):
            if race == race_id:
                task.cancel()

    def close(self) -> None:
        for task, _ in list(self.playing.values()):
            task.cancel()
