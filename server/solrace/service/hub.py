"""The hub: the races this process holds, and commit-then-emit.

The hub keeps the live races (and a cache of finished ones), carries out the
:class:`~solrace.core.dispatch.Effects` of every command — outcomes to the store first, then, once
they are durable, the replies, the events on the bus, the throttled board views and the
first states of a race that starts — and fires each race's deadlines through the same path.

Nothing is sent before the commit that makes it true: a reply a client sees is never lost by a
crash. If a commit fails, the commands it carried get ``unavailable`` errors, and every race the
lost batch touched is dropped from memory and rebuilt from the store (in a worker thread), so
that nothing that failed to be written is ever visible; commands for a race being rebuilt get
``unavailable`` meanwhile. The hub never awaits except to load a race.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import string
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from solrace.bus.base import Bus, Event, Publishable
from solrace.core.dispatch import (
    Announce,
    Bind,
    Dispatcher,
    Effects,
    Emit,
    Follow,
    NeedsDeals,
    NeedsHint,
    NotLoaded,
    Pending,
    Reply,
    Seats,
    Session,
    Snapshot,
    State,
    TView,
    Unbind,
    Unfollow,
)
from solrace.core.quotas import Caps
from solrace.core.race import Outcome, Race, RaceError
from solrace.core.tournament import Tournament
from solrace.core.views import RACERS, SPECTATORS, BoardViews, seat_of
from solrace.protocol import codec, messages
from solrace.service.organizer import Organizer
from solrace.service.recovery import StoreWatch
from solrace.service.timers import Deadlines, Throttle
from solrace.settings import (
    ABANDON_MS,
    BOARD_INTERVAL,
    CLAIM_AFTER_MS,
    COUNTDOWN_S,
    FINISHED_CACHE,
    MAX_LOBBIES,
    MAX_RACES,
    RACER_BOARD_INTERVAL,
)
from solrace.solver.assist import Assist
from solrace.solver.jobs import Solver
from solrace.store.base import Store

log = logging.getLogger(__name__)

RACE_ID_ALPHABET = string.ascii_lowercase + string.digits


class Client(Session, Protocol):
    """A session the hub can write to and subscribe (a WebSocket connection)."""

    def __hash__(self) -> int: ...

    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None: ...

    def follow(self, race: str, boards: bool = True) -> None: ...

    def unfollow(self, race: str) -> None: ...

    def attach(self, race: str, player: str) -> None:
        """Speak for ``player`` of ``race`` (and keep the seat)."""

    def detach(self, race: str) -> str | None:
        """Stop speaking for a racer of ``race``; which one it was."""


class Hub:
    """Races held by this process, and everything that happens to them (module docstring)."""

    def __init__(
        self,
        store: Store,
        bus: Bus,
        clock: Callable[[], int],
        *,
        countdown: float = COUNTDOWN_S,
        max_races: int = MAX_RACES,
        max_lobbies: int = MAX_LOBBIES,
        masking: bool = True,
        solver: Solver | None = None,
        caps: Caps | None = None,
    ) -> None:
        self.store = store
        self.bus = bus
        self.clock = clock
        self.countdown_ms = int(countdown * 1000)
        #: Every cap a client can fill, and each address's share (solrace.core.quotas).
        self.caps = caps if caps is not None else Caps(races=max_races, lobbies=max_lobbies)
        #: How long a running race every racer still racing has left goes on (ms).
        self.abandon_ms = ABANDON_MS
        #: How long every other racer still racing must have been offline for a racer to
        #: claim the race (ms).
        self.claim_after_ms = CLAIM_AFTER_MS
        #: Off only for benchmarks that measure what the views rule costs.
        self.masking = masking
        self.races: dict[str, Race] = {}  # unfinished races
        self.finished: OrderedDict[str, Race] = OrderedDict()
        self.reloading: dict[str, asyncio.Future[None]] = {}
        #: Live connections per racer, by race (not durable; kept here so that a race rebuilt
        #: from the store still knows who is online).
        self.online: dict[str, dict[str, int]] = {}
        #: The one connection bound to each racer: (race, player) -> session.
        self.bound: dict[tuple[str, str], Client] = {}
        #: Races every racer still racing has left, and the timer that ends them.
        self.deserted: dict[str, asyncio.TimerHandle] = {}
        #: Told when the store stops (False) or starts again (True) taking writes.
        self.on_health: Callable[[bool], None] | None = None
        #: Does this process run the room of this race? (Always, but with several processes
        #: on Redis: only for the races whose unit it owns.)
        self.owns: Callable[[str], bool] = lambda race_id: True
        #: With Redis: hands an outcome's messages to the store, which publishes them to the
        #: other processes in the same script that writes the outcome.
        self.publish_with_commit: Callable[[str, list[Event]], None] | None = None
        self._loading: dict[str, asyncio.Future[Race | None]] = {}
        self.deadlines = Deadlines(clock, self._on_deadline)
        self.throttles = {
            SPECTATORS: Throttle(BOARD_INTERVAL, self._boards_for(SPECTATORS)),
            RACERS: Throttle(RACER_BOARD_INTERVAL, self._boards_for(RACERS)),
        }
        self.dispatcher = Dispatcher(self, self.new_token, self.new_race_id)
        self.organizer = Organizer(self)
        self.assist = Assist(self, solver)
        self.watch = StoreWatch(self)
        store.on_failure = self.on_store_failure

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

    # ------------------------------------------------------------------ ids
    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(24)

    @staticmethod
    def new_salt() -> str:
        return secrets.token_hex(16)

    def new_tournament_id(self) -> str:
        while True:
            tid = "".join(secrets.choice(RACE_ID_ALPHABET) for _ in range(10))
            if tid not in self.organizer.tournaments and not self.store.exists(tid):
                return tid

    def new_race_id(self) -> str:
        while True:
            race_id = "".join(secrets.choice(RACE_ID_ALPHABET) for _ in range(8))
            if race_id not in self.races and not self.store.exists(race_id):
                return race_id

    # -------------------------------------------------------------- commands
    def run(self, session: Client, fx: Effects) -> asyncio.Future[None] | None:
        """Carry out ``fx`` for ``session``: queue its writes, and its steps for right after
        they are durable. Returns a future done after the steps when ``fx.barrier``."""
        race = fx.race
        store = self.store
        if fx.created is not None:
            self.races[fx.created.race] = fx.created
            self.assist.known(fx.created)
            store.add_race(fx.created)
        if race is not None:
            for out in fx.outcomes:
                self._queue(race, out)
        t = fx.tournament
        if t is not None:
            if fx.tcreated:
                self.organizer.tournaments[t.tid] = t
                store.add_tournament(t)
            now = self.clock()
            for tout in fx.touts:
                self.organizer.queue(t, tout, now)
        done = asyncio.get_running_loop().create_future() if fx.barrier else None

        def ok() -> None:
            self._steps(session, fx)
            if done is not None and not done.done():
                done.set_result(None)

        def fail(exc: BaseException) -> None:
            session.send(codec.error("unavailable", "the server could not save this: try again",
                                     fx.rid))
            if done is not None and not done.done():
                done.set_result(None)

        store.after_commit(ok, fail)
        return done

    def reply_later(self, session: Client, msg: dict[str, Any]) -> None:
        """Send ``msg`` (an error, say) after what is waiting for a commit, so that a
        connection's replies keep the order of its commands."""
        self.store.after_commit(lambda: session.send(msg), lambda _: session.send(msg))

    def _steps(self, session: Client, fx: Effects) -> None:
        race = fx.race
        for step in fx.steps:
            kind = type(step)
            if kind is Reply:
                session.send(step.msg)  # type: ignore[union-attr]
            elif kind is Emit:
                if race is not None:
                    for out in fx.outcomes:
                        self.emit(race, out)
                if fx.tournament is not None:
                    for tout in fx.touts:
                        self.organizer.emit(fx.tournament, tout)
            elif kind is Follow:
                session.follow(step.race, step.boards)  # type: ignore[union-attr]
            elif kind is Unfollow:
                session.unfollow(step.race)  # type: ignore[union-attr]
            elif kind is Bind:
                self.bind(session, step.race, step.player)  # type: ignore[union-attr]
            elif kind is Unbind:
                self.unbind(session, step.race)  # type: ignore[union-attr]
            elif kind is Snapshot:
                assert race is not None
                you = session.players.get(race.race)
                session.send(messages.snapshot(race, you, seat_of(session, race), self.clock(),
                                               step.rid, self.masking))  # type: ignore[union-attr]
            elif kind is State:
                assert race is not None
                session.send(messages.state(race, step.player))  # type: ignore[union-attr]
            elif kind is Announce:
                self.bus.publish(step.race, Event(step.msg))  # type: ignore[union-attr]
            elif kind is TView:
                assert fx.tournament is not None
                session.send(messages.tournament_view(
                    fx.tournament, session.players.get(fx.tournament.tid),
                    step.rid))  # type: ignore[union-attr]
            elif kind is Seats:
                assert fx.tournament is not None
                for msg in self.organizer.seat_messages(fx.tournament,
                                                        step.entrant):  # type: ignore[union-attr]
                    session.send(msg)

    # ---------------------------------------------------------------- output
    def emit(self, race: Race, out: Outcome) -> None:
        """Send a committed outcome: its events, then what follows from them."""
        if out.views:
            # Someone saw a new card or stopped racing: what others may be shown of every
            # board of the deal may have grown, so every board goes out again.
            race.deal.changed()
            for other in race.deal.races:
                if other.status == "running" or other is race:
                    for throttle in self.throttles.values():
                        throttle.mark(other.race, list(other.racers))
        elif out.moved:
            for throttle in self.throttles.values():
                throttle.mark(race.race, out.moved)
        bus, race_id = self.bus, race.race
        if out.wire is not None:  # published to the other processes with the commit already
            for event in out.wire:
                bus.publish(race_id, event, remote=False)
        else:
            for event in self.wire(race, out):
                bus.publish(race_id, event)
        if out.finished:
            # The final boards go after race_over: once the deal is revealed they show every
            # card, and nobody may see one before he is told the race is over.
            for throttle in self.throttles.values():
                throttle.flush(race.race)
            self._retire(race)
            self.organizer.race_over(race)
            if race.revealed:
                self.assist.revealed(race.deal.races)
        elif out.events:
            self.deadlines.set(race_id, race.next_deadline())
            if out.started or out.views:
                self._check_deserted(race)

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
            out.wire = self.wire(race, out)
            self.publish_with_commit(race.race, out.wire)

    def _boards_for(self, audience: str) -> Callable[[str, set[str]], None]:
        def send(race_id: str, players: set[str]) -> None:
            race = self.races.get(race_id) or self.finished.get(race_id)
            if race is None:
                return
            for player in sorted(players):
                views: Publishable = BoardViews(race, player, audience, self.masking)
                self.bus.publish(race_id, views)

        return send

    def bind(self, session: Client, race_id: str, player: str) -> None:
        """``session`` speaks for ``player`` of ``race_id`` from now on. A racer has one live
        connection: one that spoke for it before is told (``replaced``) and unbound."""
        if session.players.get(race_id) == player:
            return
        self.unbind(session, race_id)
        older = self.bound.get((race_id, player))
        if older is not None:
            msg = {"type": "replaced", "race": race_id, "player": player}
            if race_id in self.organizer.tournaments:  # an entrant taken over
                msg = {"type": "replaced", "tournament": race_id, "entrant": player, **msg}
            older.send(msg)
            self.unbind(older, race_id)
        session.attach(race_id, player)
        self.bound[race_id, player] = session
        self.presence(race_id, player, +1)

    def unbind(self, session: Client, race_id: str) -> None:
        player = session.detach(race_id)
        if player is not None:
            if self.bound.get((race_id, player)) is session:
                del self.bound[race_id, player]
            self.presence(race_id, player, -1)

    def presence(self, race_id: str, player: str, delta: int) -> None:
        """Count one more (or one fewer) live connection for a racer; when it goes online or
        offline, tell the race with an unnumbered ``presence`` message."""
        race = self.races.get(race_id) or self.finished.get(race_id)
        if race is None or player not in race.racers:
            return
        counts = self.online.setdefault(race_id, {})
        before = counts.get(player, 0)
        after = max(0, before + delta)
        if after:
            counts[player] = after
        else:
            counts.pop(player, None)
            if not counts:
                del self.online[race_id]
        racer = race.racers[player]
        racer.connections = after
        if after:
            racer.offline_since = None
        elif before or racer.offline_since is None:
            racer.offline_since = self.clock()
        if (after > 0) != (before > 0):
            self.bus.publish(race_id, Event(messages.presence(race, player)))
            self._check_deserted(race)

    def _check_deserted(self, race: Race) -> None:
        """A running race whose racers still racing all left ends ``abandon_ms`` later,
        unless one of them comes back first."""
        racing = race.still_racing()
        deserted = race.status == "running" and bool(racing) and all(
            r.connections == 0 for r in racing)
        timer = self.deserted.get(race.race)
        if deserted and timer is None:
            self.deserted[race.race] = asyncio.get_running_loop().call_later(
                self.abandon_ms / 1000, self._desert, race.race)
        elif not deserted and timer is not None:
            timer.cancel()
            del self.deserted[race.race]

    def _desert(self, race_id: str) -> None:
        self.deserted.pop(race_id, None)
        race = self.races.get(race_id)
        if race is None or not self.store.healthy:
            return
        if all(r.connections == 0 for r in race.still_racing()):
            self.record(race, race.abandon(self.clock()))

    def _adopt(self, race: Race) -> None:
        """Hold a race rebuilt from the store: live or cached, online counts restored."""
        online = self.online.get(race.race, {})
        now = self.clock()
        for player, racer in race.racers.items():
            racer.connections = online.get(player, 0)
            # Nobody knows since when a racer rebuilt here has been away: from now.
            racer.offline_since = None if racer.connections else now
        self.assist.known(race)
        if race.status == "finished":
            self._cache(race)
            if race.revealed:
                self.assist.revealed([race])
        else:
            self.races[race.race] = race
            self.deadlines.set(race.race, race.next_deadline())
            self._check_deserted(race)

    # ---------------------------------------------------------------- timers
    def _on_deadline(self, race_id: str) -> None:
        race = self.races.get(race_id)
        if race is None:
            return
        if not self.store.healthy:  # nothing can be recorded now: try again in a second
            self.deadlines.set(race_id, self.clock() + 1000)
            return
        self.record(race, race.tick(self.clock()))

    def record(self, race: Race, out: Outcome) -> None:
        """Make an outcome nobody asked for (a deadline) durable, then emit it."""
        self._queue(race, out)
        self.store.after_commit(lambda: self.emit(race, out))

    # ---------------------------------------------------------------- races
    def _retire(self, race: Race) -> None:
        self.races.pop(race.race, None)
        self.deadlines.cancel(race.race)
        timer = self.deserted.pop(race.race, None)
        if timer is not None:
            timer.cancel()
        for throttle in self.throttles.values():
            throttle.forget(race.race)
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

    def get(self, race_id: str) -> Race | None:
        """A race held in memory (live, or finished and cached); never reads the store."""
        return self.races.get(race_id) or self.finished.get(race_id)

    async def load(self, race_id: str) -> Race | None:
        """A race from memory or, rebuilt away from the event loop, from the store (one load
        per race at a time however many ask); None if there is no such race."""
        race = self.get(race_id)
        if race is not None:
            return race
        reloading = self.reloading.get(race_id)
        if reloading is not None:
            await reloading
            return self.get(race_id)
        loading = self._loading.get(race_id)
        if loading is None:
            loading = asyncio.ensure_future(self.store.load(race_id))
            self._loading[race_id] = loading
            loading.add_done_callback(lambda _: self._loading.pop(race_id, None))
        race = await asyncio.shield(loading)
        if race is None:
            return None
        held = self.get(race_id)
        if held is not None:  # someone else loaded or created it meanwhile
            return held
        if race.status != "finished" and not self.owns(race_id):
            return race  # another process runs it: a copy as it was just now, not held here
        if race.status != "finished":  # finished by the clock while nobody was looking
            out = race.tick(self.clock())
            if out.finished and race.finished_at is not None:
                self.store.mark_finished(race.race, race.finished_at)
        self._adopt(race)
        return race

    async def prepare(self, pending: Pending) -> bool:
        """Do what a command was waiting for (load its race or tournament, work out a hint);
        False if the race or tournament does not exist. RaceError if it cannot be done."""
        if isinstance(pending, NotLoaded):
            if pending.tournament:
                return await self.load_tournament(pending.race) is not None
            return await self.load(pending.race) is not None
        if isinstance(pending, NeedsDeals):
            deals = self.assist.deals
            await deals.claim(pending.game, pending.n)
            if deals.ready(pending.game) < pending.n:
                ready = deals.ready(pending.game)
                raise RaceError("unavailable", f"{ready} winnable {pending.game} deals are "
                                f"ready, {pending.n} needed: the server is solving more, try "
                                "again in a minute")
            return True
        assert isinstance(pending, NeedsHint)
        await self.assist.hint(pending)
        return True

    async def load_tournament(self, tid: str) -> Tournament | None:
        """A tournament from memory or, with its races, from the store; None if unknown."""
        t = self.organizer.tournaments.get(tid)
        if t is not None:
            return t
        t = await self.store.load_tournament(tid)
        if t is None:
            return None
        held = self.organizer.tournaments.get(tid)
        if held is not None:
            return held
        if not self.owns(tid):
            return t  # another process runs it: a copy as it was just now
        races = [race for race_id in self.organizer.race_ids(t)
                 if (race := await self.load(race_id)) is not None]
        self.organizer.adopt(t, races)
        return t

    def adopt(self, race: Race) -> None:
        """Run a race rebuilt from the store here (this process just became its owner)."""
        if self.get(race.race) is None:
            self._adopt(race)

    def release(self, race_id: str) -> None:
        """Stop running a race here without ending it (another process owns it now)."""
        self.races.pop(race_id, None)
        self.finished.pop(race_id, None)
        self.deadlines.cancel(race_id)
        timer = self.deserted.pop(race_id, None)
        if timer is not None:
            timer.cancel()
        for throttle in self.throttles.values():
            throttle.forget(race_id)

    def recover(self) -> int:
        """Load every unfinished race from the store and catch up with the clock (a race whose
        countdown or time limit passed while the server was down moves on at once)."""
        now = self.clock()
        count = 0
        if not self.store.healthy:
            self.watch_store()
        for race in self.store.load_unfinished():
            self.races[race.race] = race
            for racer in race.racers.values():
                racer.offline_since = now  # nobody is connected yet after a restart
            out = race.tick(now)
            if out.finished and race.finished_at is not None:
                self.store.mark_finished(race.race, race.finished_at)
                self._retire(race)
            else:
                self.deadlines.set(race.race, race.next_deadline())
                self._check_deserted(race)  # nobody is connected yet after a restart
            count += 1
        for t in self.store.load_unfinished_tournaments():
            races = []
            for race_id in self.organizer.race_ids(t):
                held = self.get(race_id)
                if held is None and hasattr(self.store, "read"):
                    held = self.store.read(race_id)  # a finished race of the tournament
                    if held is not None:
                        self._adopt(held)
                if held is not None:
                    races.append(held)
            self.organizer.adopt(t, races)
            tout = t.tick(now, self.organizer.drawer(t))
            if tout.log or tout.events:
                self.organizer.record(t, tout)
        self.store.commit()
        return count

    def on_store_failure(self, race_ids: set[str], exc: BaseException) -> None:
        self.watch.failed(race_ids, exc)

    def watch_store(self) -> None:
        self.watch.start()

    def close(self) -> None:
        self.deadlines.close()
        self.organizer.close()
        for timer in self.deserted.values():
            timer.cancel()
        for throttle in self.throttles.values():
            throttle.close()
        self.store.commit()
