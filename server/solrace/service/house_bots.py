"""The house's bots: racers the server plays itself (the home page's *Play a bot*, and the
opponent a quick-race seeker gets when nobody comes).

A house bot is a session of the hub like a connection (:class:`BotSession`): it takes its
seat with its token, is bound to its racer (so it counts as connected: nobody can claim a race
from a bot that is there), and sends its moves through the dispatcher like any client, so
every rule and every limit applies to it. It sees what any racer sees: its own board (face-up
cards only).

**Its pace.** A level's pace (:mod:`solrace.core.levels`) is the time from one move to the
next, thinking included, on any deal. A solver level asks for its next move as soon as it has
played the last one (and for its first during the countdown, planning its line), as a hint is
worked out (a winning line on its guess of the hidden cards, followed while the cards it turns
up match), but in a lane of its own: :attr:`HouseBots.lane`, a solver worker apart from the
hints' and analyses', with the bots' questions in turns by client address and bot. Each
question has its deadline, the move's time: the search gets the time until then and no more
(:meth:`~solrace.solver.jobs.Solver.hint`), so the answer comes while the bot waits out its
pace; an answer that found a winning line brings the whole line. With no answer by then and
:data:`~solrace.settings.BOT_GRACE` of the pace (the lane full of bots, a hard deal, a worker
gone), the bot plays the next move of the line it holds, if any, else
:func:`~solrace.core.levels.fallback` at once: the solver's heuristic move on its own guess
of the hidden cards. A question that saw no win makes the bot rest the lane for a few moves
(:data:`~solrace.settings.BOT_REST`), playing those fallbacks, before it asks again. A bot
that sees no win plays on at its pace; it resigns only as any bot does (no legal move, or
:data:`~solrace.settings.BOT_GIVE_UP` moves without progress).

It runs where its race runs: a process that takes a race over (after a failover) starts the
race's house bots again (:meth:`HouseBots.adopted`); one that lets a race go stops them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from solrace.bus.base import Subscription
from solrace.core.errors import Code
from solrace.core.identity import Who
from solrace.core.levels import LEVELS, Level, choose, fallback, headway
from solrace.core.quotas import admit, client_key
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.protocol import commands, messages
from solrace.protocol.event import Event, Publishable
from solrace.settings import BOT_GIVE_UP, BOT_GRACE, BOT_NICE_ABOVE_HINTS, BOT_REST
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
        #: Moves the server refused, moves played without the solver's answer (what the
        #: tests and bench/bot_pace_bench.py look at), and the moves played (the last one is
        #: not taken straight back by a fallback).
        self.refused = 0
        self.fallbacks = 0
        self.played: list[str] = []
        #: The question asked of the solver: for which position (seq), and its answer (a
        #: move, and the winning line it begins).
        self.thought: tuple[int, asyncio.Task[tuple[str | None, list[str]]]] | None = None
        #: The rest of the last winning line the solver answered: played on, move by move,
        #: while later answers come too late (``ahead`` counts those moves).
        self.line: list[str] = []
        self.ahead = 0
        #: Questions in a row that saw no win, and moves to play before asking again.
        self.misses = 0
        self.rest = 0

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
        waiting = self.hub.execute(self, cmd)
        if waiting is not None:
            await waiting

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
        due: float | None = None  # when the next move is to be played (the loop's time)
        try:
            while True:
                race = self.hub.races.get(self.race)
                if race is None:
                    return  # over, or run by another process now
                racer = race.racers[self.player]
                if racer.done:
                    return
                if race.status != "running":
                    if race.status == "countdown" and race.starts_at is not None:
                        # Plan the line during the countdown: the first move is due one pace
                        # after the start.
                        due = (loop.time() + max(0, race.starts_at - self.hub.clock()) / 1000
                               + self.level.pace)
                        self._think(race, due)
                    self.wake.clear()
                    await self.wake.wait()
                    continue
                if due is None:
                    due = loop.time() + self.level.pace
                self._think(race, due)
                await asyncio.sleep(max(0.0, due - loop.time()))
                race = self.hub.races.get(self.race)
                if race is None or race.status != "running" or racer.done:
                    continue
                state = messages.state(race, self.player)
                now = headway(state)
                if now > best:
                    best, stale = now, 0
                move = await self._choose(race, state, due)
                if move is None or stale >= BOT_GIVE_UP:
                    await self._do(commands.Resign(self.race))
                    return
                due = loop.time() + self.level.pace
                try:
                    await self._do(commands.MoveCmd(self.race, move, state["seq"] + 1))
                except RaceError as exc:
                    if exc.code not in (Code.RATE_LIMITED, Code.UNAVAILABLE, Code.BAD_SEQ,
                                        Code.ILLEGAL_MOVE):
                        raise
                    self.refused += 1
                    continue
                self.moves += 1
                self.played.append(move)
                stale += 1
        finally:
            if self.thought is not None:
                self.thought[1].cancel()

    def _think(self, race: Race, due: float) -> None:
        """Ask the bots' solver lane for the move at the bot's position now, to be played at
        ``due`` (nothing if it asks already, rests, or plays by no solver)."""
        lane = self.bots.lane
        racer = race.racers[self.player]
        if lane is None or self.level.policy != "solver" or self.rest > 0:
            return
        if self.thought is not None:
            if self.thought[0] == racer.seq:
                return
            self.thought[1].cancel()  # for a position left behind
        key = f"{race.race}/{self.player}"
        asked = lane.hint(race.game, race.seed, list(racer.actions), key,
                          self.rng.getrandbits(32), client=client_key(self.address),
                          deadline=due, line=True)
        self.thought = (racer.seq, self.hub.supervisor.spawn(_answer(asked), f"bot {key} thinks"))

    async def _choose(self, race: Race, state: dict[str, Any], due: float) -> str | None:
        """The move to play now: the solver's if it answers by ``due`` and a little after
        (:data:`~solrace.settings.BOT_GRACE` of the pace), else the next of the winning line
        it answered before, if the bot holds one, else
        :func:`~solrace.core.levels.fallback`'s."""
        legal: list[str] = state["legal"]
        if not legal:
            return None
        if self.level.policy != "solver":
            return choose(state, self.level.policy, self.rng)
        thought, self.thought = self.thought, None
        if thought is not None and thought[0] == state["seq"]:
            try:
                async with asyncio.timeout_at(due + BOT_GRACE * self.level.pace):
                    move, line = await thought[1]
                    answered = True
            except TimeoutError:  # (its task is cancelled: the position is left behind)
                move, line, answered = None, [], False
            if line:
                self.misses, self.line = 0, line[1:]
            elif answered or not self.line:
                # A search that saw no win (a hard deal, a full lane) would most likely see
                # none a move later either: rest the lane a few moves, more after each miss.
                self.misses += 1
                self.line = []
            self.rest = min(2 ** min(self.misses, 8) // 2, BOT_REST)
            if move in legal:
                return move
        elif thought is not None:
            thought[1].cancel()
        else:
            self.rest = max(0, self.rest - 1)
        if self.line and self.line[0] in legal:
            # No answer in time, but a winning line in hand: its next move.
            self.ahead += 1
            return self.line.pop(0)
        self.line = []
        self.fallbacks += 1
        last = self.played[-1] if self.played else None
        return fallback(race.racers[self.player].game, state, last, self.rng)


async def _answer(asked: Coroutine[Any, Any, dict[str, Any]]) -> tuple[str | None, list[str]]:
    """The move a bot's question to the solver answers (None: busy, too late, or none), and
    the winning line from there that it is the first move of (empty if none was seen)."""
    try:
        answer = await asked
    except SolverBusy:
        return None, []
    move = answer.get("move")
    line = [str(m) for m in answer.get("line") or ()]
    return (str(move) if move is not None else None), line


class HouseBots:
    """The house bots this process plays (see the module docstring)."""

    def __init__(self, hub: Hub, solver: Solver | None, lane: Solver | None = None) -> None:
        self.hub = hub
        self.solver = solver
        #: The bots' own solver (a worker process of its own, with the hints' budget, niced a
        #: little more: a racer waiting for a hint comes first): a bot never waits behind a
        #: racer's hint or an analysis (see BOT_GRACE in settings).
        if lane is None and solver is not None and solver.hints_on:
            lane = Solver(hint_seconds=solver.hint_seconds, par_seconds=0,
                          hint_nodes=solver.hint_nodes,
                          nice=min(19, solver.nice + BOT_NICE_ABOVE_HINTS),
                          supervisor=hub.supervisor)
        self.lane = lane
        self.playing: dict[tuple[str, str], tuple[asyncio.Task[None], str]] = {}
        #: The bots playing, by race and player (what tests and benchmarks look at).
        self.sessions: dict[tuple[str, str], BotSession] = {}

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
        self.sessions[key] = bot
        task.add_done_callback(lambda _: self._ended(key))

    def _ended(self, key: tuple[str, str]) -> None:
        self.playing.pop(key, None)
        self.sessions.pop(key, None)

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
        if self.lane is not None:
            self.lane.close()
