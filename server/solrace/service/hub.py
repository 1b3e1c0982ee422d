"""The hub: the races this process holds, and commit-then-emit.

The hub keeps the live races (and a cache of finished ones), hands every command to the pure
dispatcher (:func:`solrace.protocol.dispatch.handle`, with itself as the dispatcher's
:class:`~solrace.core.effects.World`), carries out the :class:`~solrace.core.effects.Effects`
— outcomes to the store first, then, once they are durable, the replies, the events on the bus,
the throttled board views and the first states of a race that starts — and fires each race's
deadlines through the same path.

Nothing is sent before the commit that makes it true: a reply a client sees is never lost by a
crash. If a commit fails, the commands it carried get ``unavailable`` errors, and every race the
lost batch touched is dropped from memory and rebuilt from the store (in the background, see
:mod:`solrace.service.recovery`), so that nothing that failed to be written is ever visible;
commands for a race being rebuilt get ``unavailable`` meanwhile. The hub awaits only to load a
race or a tournament and to do what a command waits for (:meth:`Hub.settle`).

Every command takes one path, :meth:`Hub.execute`: dispatch → settle (when it waits) → run.
Two parts of the hub have modules of their own: its base :class:`~solrace.service.loading.
Loading` (races and tournaments back from the store) and the step table
(:func:`solrace.service.steps.take_steps`: what each step of the effects does once durable).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol

from solrace.bus.base import Bus
from solrace.core.arena import Arena
from solrace.core.effects import Effects, Later, NotLoaded, Pending, Reply
from solrace.core.errors import Code
from solrace.core.keys import net_tag
from solrace.core.quotas import Caps, outside_reserve
from solrace.core.race import Race
from solrace.core.race_parts import Outcome, RaceError
from solrace.core.tournament import Tournament
from solrace.core.units import Unit
from solrace.core.views import RACERS, SPECTATORS
from solrace.protocol import codec, dispatch, messages
from solrace.protocol.board_views import BoardViews
from solrace.protocol.commands import Command
from solrace.protocol.event import Event, Publishable
from solrace.runtime.supervisor import Supervisor
from solrace.service.arenas import ArenaDirector
from solrace.service.entropy import SecretEntropy
from solrace.service.loading import Loading, Scores
from solrace.service.organizer import Organizer
from solrace.service.presence import Presence
from solrace.service.recovery import StoreWatch
from solrace.service.steps import Follower, take_steps
from solrace.service.timers import Deadlines, Throttle
from solrace.service.unit_director import RacePorts
from solrace.settings import (
    BOARD_INTERVAL,
    CLAIM_AFTER_MS,
    COUNTDOWN_S,
    FINISHED_CACHE,
    RACER_BOARD_INTERVAL,
)
from solrace.solver.assist import Assist
from solrace.solver.deal_source import DealSource
from solrace.store.base import Store

log = logging.getLogger(__name__)

#: A command that waits for something (a race loaded, a hint worked out) is dispatched again
#: at most this many times.
SETTLE_TRIES = 3


class Sender(Protocol):
    """Anything a reply can be sent to (a connection, another process's, a house bot)."""

    def send(self, msg: dict[str, Any], urgent: bool = True) -> None: ...


class Bots(Protocol):
    """The house's bots (solrace.service.house_bots): played where their race runs."""

    def adopted(self, race: Race) -> None: ...

    def stop(self, race_id: str) -> None: ...

    def can_play_level(self, level: int) -> bool: ...


class Hub(Loading):
    """Races held by this process, and everything that happens to them (module docstring).

    ``assist`` gives hints and par (:mod:`solrace.solver.assist`); its deals are the
    dispatcher's source of new seeds. ``supervisor`` runs every background job."""

    def __init__(
        self,
        store: Store,
        bus: Bus,
        clock: Callable[[], int],
        *,
        assist: Assist | None = None,
        supervisor: Supervisor | None = None,
        countdown: float = COUNTDOWN_S,
        masking: bool = True,
        caps: Caps | None = None,
    ) -> None:
        self.store = store
        self.bus = bus
        self.clock = clock
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        self.assist = assist if assist is not None else Assist(None, DealSource(), bus.publish)
        self.entropy = SecretEntropy()
        #: The key of the networks' tags (solrace.core.keys: the app gives the deployment's).
        self.net_key = secrets.token_bytes(32)
        self.countdown_ms = int(countdown * 1000)
        #: Every cap a client can fill, and each address's share (solrace.core.quotas).
        self.caps = caps if caps is not None else Caps()
        #: How long every other racer still racing must have been offline for a racer to
        #: claim the race (ms).
        self.claim_after_ms = CLAIM_AFTER_MS
        #: Off only for benchmarks that measure what the views rule costs.
        self.masking = masking
        self.races: dict[str, Race] = {}  # unfinished races
        self.finished: OrderedDict[str, Race] = OrderedDict()
        self.reloading: dict[str, asyncio.Future[None]] = {}
        #: Told when the store stops (False) or starts again (True) taking writes.
        self.on_health: Callable[[bool], None] | None = None
        #: Does this process run the room of this race? (Always, but with several processes
        #: on Redis: only for the races whose unit it owns.)
        self.owns: Callable[[str], bool] = lambda race_id: True
        #: With Redis: hands an outcome's messages to the store, which publishes them to the
        #: other processes in the same script that writes the outcome.
        self.publish_with_commit: Callable[[str, Sequence[Publishable]], None] | None = None
        self._loading: dict[str, asyncio.Task[Race | None]] = {}
        #: Tournaments and arenas being loaded (and adopted), one load per unit at a time.
        self._loading_units: dict[str, asyncio.Task[Unit | None]] = {}
        #: The house's bots (solrace.service.house_bots) and the scorer of finished races
        #: (solrace.service.scoring), when the server has them.
        self.house_bots: Bots | None = None
        self.scorer: Scores | None = None
        #: Told of every race that ends here (the matchmaker: a quick race nobody else sat in).
        self.on_race_over: Callable[[Race], None] | None = None
        self.deadlines = Deadlines(clock, self._on_deadline)
        self.presence = Presence(clock, self.get, bus.publish, self.record,
                                 lambda: store.healthy,
                                 lambda unit: unit in self.organizer.tournaments)
        self.throttles = {
            SPECTATORS: Throttle(BOARD_INTERVAL, self._boards_for(SPECTATORS)),
            RACERS: Throttle(RACER_BOARD_INTERVAL, self._boards_for(RACERS)),
        }
        ports = RacePorts(get=self.get, hold=self.hold, record=self.record, arm=self.arm,
                          room=self.room_for, play_bots=self._play_bots)
        self.organizer = Organizer(store, bus.publish, clock, self.assist.deals,
                                   self.countdown_ms, ports)
        self.arena_director = ArenaDirector(store, bus.publish, clock, self.assist.deals,
                                            self.countdown_ms, ports)
        self.presence.on_unit = self.arena_director.presence
        self.watch = StoreWatch(store, self.supervisor, forget=self.forget,
                                adopt=self.adopt_loaded,
                                owns=lambda race_id: self.owns(race_id),
                                health=lambda ok: self.on_health and self.on_health(ok),
                                reloading=self.reloading, forget_unit=self.forget_unit,
                                load_unit=lambda tid: self.load_tournament(tid, True))
        store.on_failure = self.watch.failed

    # --------------------------------------------------- what the dispatcher sees (World)
    @property
    def tournaments(self) -> Mapping[str, Tournament]:
        return self.organizer.tournaments

    @property
    def arenas(self) -> Mapping[str, Arena]:
        return self.arena_director.arenas

    @property
    def writable(self) -> bool:
        return self.store.healthy

    @property
    def deals(self) -> DealSource:
        return self.assist.deals

    def net(self, address: str) -> str:
        return net_tag(self.net_key, address)

    def hint_answer(self, race: str, player: str, seq: int) -> dict[str, Any] | None:
        return self.assist.answer(race, player, seq)

    def hint_refusal(self, address: str) -> RaceError | None:
        return self.assist.refusal(address)

    def entrants_from(self, tournament: str, address: str) -> int:
        return self.organizer.entrants_from(tournament, address)

    def can_play_bot(self, level: int) -> bool:
        return self.house_bots is not None and self.house_bots.can_play_level(level)

    @property
    def max_races(self) -> int:
        return self.caps.races

    @max_races.setter
    def max_races(self, value: int) -> None:
        self.caps.races = value

    @property
    def max_lobbies(self) -> int:
        return self.caps.lobbies

    @max_lobbies.setter
    def max_lobbies(self, value: int) -> None:
        self.caps.lobbies = value

    def room_for(self, races: int) -> bool:
        """Do ``races`` more fit in the race cap, outside the part kept for single players?"""
        return outside_reserve(len(self.races), self.caps.races, races)

    # -------------------------------------------------------------- commands
    def execute(self, session: Follower, cmd: Command, barrier: bool = False,
                ) -> asyncio.Future[None] | Coroutine[Any, Any, None] | None:
        """The one path of every command: dispatch → settle → run.

        ``cmd`` is dispatched at once (:meth:`dispatch`) and its effects run (:meth:`run`):
        None then, or, when its effects ask for a barrier (or ``barrier`` does), a future done
        once its steps ran. A command that has to wait for something (a race loaded, a hint
        worked out: :class:`Pending`) gives a coroutine instead, to be awaited in a job of the
        caller's: it does what the command waits for, dispatches it again (:meth:`settle`),
        runs it and returns after its steps ran when there is a barrier. A refused command
        raises (RaceError, ProtocolError...): at once, or from the coroutine."""
        try:
            fx = self.dispatch(session, cmd)
        except Pending as pending:
            return self._settled(session, cmd, pending, barrier)
        return self.run(session, fx, barrier)

    async def _settled(self, session: Follower, cmd: Command, pending: Pending,
                       barrier: bool) -> None:
        done = self.run(session, await self.settle(session, cmd, pending), barrier)
        if done is not None:
            await done

    def dispatch(self, session: Follower, cmd: Command) -> Effects:
        """The effects of ``cmd`` (see :func:`solrace.protocol.dispatch.handle`); raises
        RaceError, ProtocolError or Pending."""
        return dispatch.handle(self, session, cmd, self.clock())

    async def settle(self, session: Follower, cmd: Command, pending: Pending) -> Effects:
        """The effects of a command that had to wait (``pending``): do what it waits for,
        dispatch it again, as often as it takes (at most SETTLE_TRIES). RaceError
        (``not_found``, ``unavailable``...) when it cannot be done."""
        for _ in range(SETTLE_TRIES):
            if not await self.prepare(pending):
                assert isinstance(pending, NotLoaded)  # the only wait that can find nothing
                what = "tournament" if pending.tournament else "race"
                raise RaceError(Code.NOT_FOUND, f"no {what} {pending.race[:64]!r}")
            try:
                return self.dispatch(session, cmd)
            except Pending as again:
                pending = again
        raise RaceError(Code.UNAVAILABLE, "the server is busy with this: try again")

    def run(self, session: Follower, fx: Effects,
            barrier: bool = False) -> asyncio.Future[None] | None:
        """Carry out ``fx`` for ``session``: queue its writes, and its steps for right after
        they are durable. Returns a future done after the steps when ``fx.barrier`` (or
        ``barrier``)."""
        race = fx.race
        store = self.store
        if fx.created is not None:
            self.hold(fx.created)
            if fx.opened is not None:
                self._queue(fx.created, fx.opened)
        if race is not None:
            for out in fx.outcomes:
                self._queue(race, out)
        t = fx.tournament
        if t is not None:
            if fx.tcreated:
                self.organizer.hold(t)
            now = self.clock()
            for tout in fx.touts:
                self.organizer.queue(t, tout, now)
        a = fx.arena
        if a is not None:
            if fx.acreated:
                self.arena_director.hold(a)
                aid, ends_at = a.tid, a.settings.ends_at

                def index() -> None:
                    self.supervisor.spawn(store.index_arena(aid, ends_at),
                                          f"index arena {aid}", timeout=10.0)

                store.after_commit(index)
            now = self.clock()
            for aout in fx.aouts:
                self.arena_director.queue(a, aout, now)
        done = asyncio.get_running_loop().create_future() if fx.barrier or barrier else None

        def ok() -> None:
            take_steps(self, session, fx)
            if fx.created is not None and fx.opened is not None:
                self.emit(fx.created, fx.opened)  # its seats' deadline is armed
            if done is not None and not done.done():
                done.set_result(None)

        def fail(exc: BaseException) -> None:
            session.send(messages.error(Code.UNAVAILABLE, "the server could not save this: try "
                                        "again", fx.rid))
            if done is not None and not done.done():
                done.set_result(None)

        store.after_commit(ok, fail)
        steps = fx.steps
        if steps and type(steps[0]) is Later:  # a move's or an undo's state
            # The writes go out now if the store can send them at once; the racer's reply is
            # built after that, while they are on their way (see Later).
            store.send_now()
            for i, step in enumerate(steps):
                if type(step) is Later:
                    steps[i] = Reply(step.build())
        return done

    def reply_later(self, session: Sender, msg: dict[str, Any]) -> None:
        """Send ``msg`` (an error, say) after what is waiting for a commit, so that a
        connection's replies keep the order of its commands."""
        self.store.after_commit(lambda: session.send(msg), lambda _: session.send(msg))

    def refuse(self, session: Follower, cmd: Command, exc: Exception) -> None:
        """Answer a refused command (RaceError, ProtocolError) in order; anything else is a
        bug: logged, answered ``internal``."""
        if isinstance(exc, (RaceError, codec.ProtocolError)):
            rid = getattr(exc, "rid", None) or getattr(cmd, "rid", None)
            self.reply_later(session, messages.error(exc.code, exc.message, rid))
            return
        log.error("command failed", exc_info=exc)
        self.reply_later(session, messages.error(Code.INTERNAL, "the server failed on this "
                                                 "message", getattr(cmd, "rid", None)))

    # ---------------------------------------------------------------- output
    def emit(self, race: Race, out: Outcome) -> None:
        """Send a committed outcome: its events, then what follows from them."""
        if out.views:
            # Someone saw a new card or stopped racing: what others may be shown of every
            # board of the deal may have grown, so every board goes out again.
            race.deal.changed()
        bus, race_id = self.bus, race.race
        if out.wire is not None:  # published to the other processes with the commit already
            for event in out.wire:
                bus.publish(race_id, event, remote=False)
        else:
            for event in self.wire(race, out):
                bus.publish(race_id, event)
        # Marked after the events: a board that is due goes out at once, right behind its
        # move's progress, so a spectator gets both in the same write (one batch frame).
        if out.views:
            for other in race.deal.races:
                if other.status == "running" or other is race:
                    for throttle in self.throttles.values():
                        throttle.mark(other.race, list(other.racers))
        elif out.moved:
            sent = out.wire is not None and any(type(e) is BoardViews for e in out.wire)
            for audience, throttle in self.throttles.items():
                if not (sent and audience == SPECTATORS):  # then taken for the commit
                    throttle.mark(race.race, out.moved)
        if out.finished:
            # The final boards go after race_over: once the deal is revealed they show every
            # card, and nobody may see one before he is told the race is over.
            for throttle in self.throttles.values():
                throttle.flush(race.race)
            self._retire(race)
            self.organizer.race_over(race)
            self.arena_director.race_over(race)
            if race.revealed:
                self.assist.revealed(race.deal.races)
            if self.scorer is not None:
                self.scorer.finished(race)
            if self.on_race_over is not None:
                self.on_race_over(race)
        elif out.events:
            self.deadlines.set(race_id, race.next_deadline())
            if out.started or out.views:
                self.presence.check(race)

    @staticmethod
    def wire(race: Race, out: Outcome) -> list[Event]:
        """An outcome's messages for everyone following the race: its events, then each
        racer's first state when it started."""
        events = [Event(messages.event(race, ev)) for ev in out.events]
        if out.started:
            events += [Event(messages.state(race, p), to=p) for p in race.racers]
        return events

    def _queue(self, race: Race, out: Outcome) -> None:
        """Queue an outcome's writes (and, where the store publishes with its writes, its
        messages for the other processes)."""
        store = self.store
        if out.log:
            store.append(out.log)
        if out.finished and race.finished_at is not None:
            store.mark_finished(race.race, race.finished_at)
        if self.publish_with_commit is not None and (out.events or out.started):
            wire: list[Publishable] = [*self.wire(race, out)]
            if out.moved and not out.views and not out.finished:
                # A board the spectators are due goes in the same message: on every process
                # they get it in the frame of the move's progress (see emit).
                due = self.throttles[SPECTATORS].take(race.race, out.moved)
                wire += [BoardViews(race, p, SPECTATORS, self.masking) for p in due]
            out.wire = wire
            self.publish_with_commit(race.race, wire)

    def _boards_for(self, audience: str) -> Callable[[str, set[str]], None]:
        def send(race_id: str, players: set[str]) -> None:
            race = self.get(race_id)
            if race is None:
                return
            for player in sorted(players):
                views: Publishable = BoardViews(race, player, audience, self.masking)
                self.bus.publish(race_id, views)

        return send

    # -------------------------------------------------------------- presence
    def bind(self, session: Follower, race_id: str, player: str) -> None:
        """``session`` speaks for ``player`` of ``race_id`` from now on (see Presence)."""
        self.presence.bind(session, race_id, player)

    def unbind(self, session: Follower, race_id: str) -> None:
        self.presence.unbind(session, race_id)

    @property
    def abandon_ms(self) -> int:
        """How long a running race every racer still racing has left goes on (ms)."""
        return self.presence.abandon_ms

    @abandon_ms.setter
    def abandon_ms(self, value: int) -> None:
        self.presence.abandon_ms = value

    # ---------------------------------------------------------------- timers
    def _on_deadline(self, race_id: str) -> None:
        race = self.races.get(race_id)
        if race is None:
            return
        if not self.store.healthy:  # nothing can be recorded now: try again in a second
            self.deadlines.set(race_id, self.clock() + 1000)
            return
        out = race.tick(self.clock())
        if not out.events:
            # The timer fired before the wall clock reached the deadline (the loop's clock
            # is another clock, and uvloop's timers have millisecond steps): nothing was due
            # yet. Armed again, or the race would wait for a command that may never come (a
            # countdown nobody speaks in stayed a countdown).
            self.deadlines.set(race_id, race.next_deadline())
            return
        self.record(race, out)

    async def open_seated(self, race: Race, out: Outcome) -> None:
        """Hold and store a race made for its racers (a quick race, a bot race, the daily
        deal: :func:`solrace.core.rooms.seated_race`) with their seats; returns once it is
        durable (RaceError ``unavailable`` if that write failed: the race is gone then)."""
        done = asyncio.get_running_loop().create_future()

        def ok() -> None:
            self.emit(race, out)
            if not done.done():
                done.set_result(None)

        def fail(exc: BaseException) -> None:
            if not done.done():
                done.set_exception(RaceError(Code.UNAVAILABLE, "the server could not save the "
                                             "race: try again"))

        self.hold(race)
        self._queue(race, out)
        self.store.after_commit(ok, fail)
        await done

    def record(self, race: Race, out: Outcome) -> None:
        """Make an outcome nobody asked for (a deadline) durable, then emit it."""
        self._queue(race, out)
        self.store.after_commit(lambda: self.emit(race, out))

    def _play_bots(self, race: Race) -> None:
        """Play the house bots seated in a race made here (a tournament's)."""
        if self.house_bots is not None:
            self.house_bots.adopted(race)

    def arm(self, race: Race) -> None:
        """Set the race's timer for its next deadline."""
        self.deadlines.set(race.race, race.next_deadline())

    # ----------------------------------------------------------------- races
    def hold(self, race: Race) -> None:
        """A new race, created here: held from now on, stored with the next commit."""
        self.races[race.race] = race
        self.assist.known(race)
        self.store.add_race(race)

    def get(self, race_id: str) -> Race | None:
        """A race held in memory (live, or finished and cached); never reads the store."""
        return self.races.get(race_id) or self.finished.get(race_id)

    def forget(self, race_id: str) -> Race | None:
        """Stop holding a race here, whatever the reason (another process runs it now, or
        its write failed and it is rebuilt from the store): no timer, no throttle, no
        cache. The race as it was, if it was held."""
        race = self.races.pop(race_id, None) or self.finished.pop(race_id, None)
        if self.house_bots is not None:
            self.house_bots.stop(race_id)
        self.deadlines.cancel(race_id)
        self.presence.forget(race_id)
        for throttle in self.throttles.values():
            throttle.forget(race_id)
        return race

    def forget_unit(self, tid: str) -> bool:
        """Stop holding a tournament or an arena here (its write failed: it is rebuilt from
        the store); True if it was held."""
        held = self.held_unit(tid) is not None
        self.organizer.forget(tid)
        self.arena_director.forget(tid)
        return held

    def _retire(self, race: Race) -> None:
        """A race that ended: no more timers, kept in the cache of finished races."""
        self.forget(race.race)
        self._cache(race)

    def _cache(self, race: Race) -> None:
        self.finished[race.race] = race
        self.finished.move_to_end(race.race)
        while len(self.finished) > FINISHED_CACHE:
            self.finished.popitem(last=False)

    def open_races(self) -> list[Race]:
        """Public races not started yet, newest first (the home page's lobby)."""
        races = [r for r in self.races.values()
                 if r.options.public and r.status in ("lobby", "countdown")]
        return sorted(races, key=lambda r: -r.created_at)

    def adopt(self, race: Race) -> None:
        """Hold a race rebuilt from the store (a load, a takeover, a rebuild after a failed
        write): live or cached, online counts restored, its deadlines set."""
        if self.get(race.race) is not None:
            return
        self.presence.restore(race)
        self.assist.known(race)
        if race.status == "finished":
            self._cache(race)
            if race.revealed:
                self.assist.revealed([race])
        else:
            self.races[race.race] = race
            self.arm(race)
            self.presence.check(race)
            if self.house_bots is not None:
                self.house_bots.adopted(race)

    def close(self) -> None:
        self.deadlines.close()
        self.presence.close()
        self.organizer.close()
        self.arena_director.close()
        for throttle in self.throttles.values():
            throttle.close()
        self.store.commit()
