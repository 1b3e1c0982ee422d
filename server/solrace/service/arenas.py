"""The arenas this process runs, next to the hub's races and the organizer's tournaments.

It carries out what an :class:`~solrace.core.arena.Arena` decides, through the hub's
commit-then-emit path (nothing goes out before it is durable):

- **pairing**: at the arena's deadline (its start, the next pairing, its end) the arena is
  ticked; each pair it makes becomes a race of two (``{arena}-{n}``: its unit's, owned with it),
  created in the same commit as the arena's ``pair`` entry, its racers seated as a quick race's
  (they take their seats with ``join {race, token}``; a racer absent at the grace's end loses),
  each told ``paired`` (``kind: "arena"``) on the arena's channel, addressed to him;
- **results**: when a race of it ends, its racers' results go to the arena (a racer who made no
  move by his own doing — he left, or never came — loses and is paused; a result played at
  machine speed is flagged: :mod:`solrace.core.fairplay`, worked out from the race itself);
  a result the arena has not taken (its process died between the race's end and the arena's
  write) is taken when the arena is adopted again;
- **presence**: an entrant with no connection left on the arena (following it, bound to him) for
  :data:`AWAY_MS` is paused once he is not racing;
- **messages**: the view (``arena``) at most every :data:`VIEW_EVERY` seconds per arena while
  entrants come, go and race; ``arena_standings`` after a race's result (at most every
  :data:`STANDINGS_EVERY` seconds: a burst of results is one message); ``arena_over``; each
  entrant's own row (``arena_you``) when his result changes it. The table goes to the
  watchers on a channel of their own (:func:`~solrace.protocol.arena_messages.watchers`), to
  the entrants at most every :data:`ENTRANTS_TABLE_EVERY` seconds.

The director does not know the hub: like the organizer it is given the store, the bus's
publish, the clock, the deals and the hub's :class:`~solrace.service.unit_director.RacePorts`
(what the two share: :class:`~solrace.service.unit_director.UnitDirector`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from solrace.core import fairplay
from solrace.core.arena import Arena, ArenaResult
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.scoring import walked_out
from solrace.core.tournament import TOutcome
from solrace.protocol import arena_messages, messages
from solrace.protocol.event import Event
from solrace.service.timers import Deadlines
from solrace.service.unit_director import RacePorts, UnitDirector
from solrace.settings import SEAT_GRACE_S
from solrace.solver.deal_source import DealSource
from solrace.store.base import Store

log = logging.getLogger(__name__)

#: Seconds between two ``arena`` views of one arena sent to its followers, at most.
VIEW_EVERY = 1.0
#: Seconds between two ``arena_standings`` of one arena to its watchers, at most (a burst of
#: results: one).
STANDINGS_EVERY = 0.05
#: Seconds between two ``arena_standings`` of one arena to its entrants, at most: each is
#: told his own row (``arena_you``) when his race ends; the table is for the page of the arena,
#: and a thousand entrants sent it twenty times a second was most of what the processes wrote.
ENTRANTS_TABLE_EVERY = 1.0
#: Milliseconds an entrant may be without a connection on the arena before he is paused: a
#: page reloaded, a network that comes back, a server restarted (every connection closes with
#: it, and nothing of this wait is durable) do not pause anyone.
AWAY_MS = 10_000


class ArenaDirector(UnitDirector[Arena]):
    """See the module docstring."""

    def __init__(self, store: Store, publish: Callable[[str, Event], None],
                 clock: Callable[[], int], deals: DealSource, countdown_ms: int,
                 races: RacePorts) -> None:
        super().__init__(store, publish, clock, deals, countdown_ms, races)
        self.arenas: dict[str, Arena] = {}
        #: Each arena race: (arena, racer -> entrant's player id).
        self.seats: dict[str, tuple[str, dict[str, str]]] = {}
        #: Entrants whose last connection on the arena closed while they raced (by arena):
        #: paused when their race ends. Only a connection seen to close counts: a process that
        #: just took an arena over knows nobody's connections yet, and pauses nobody for it.
        self.gone: dict[str, set[str]] = {}
        self.away = Deadlines(clock, self._away)  # "arena/player" -> when he is paused
        self._due: dict[str, asyncio.TimerHandle] = {}  # (arena/kind) -> a message's timer
        self._sent: dict[str, float] = {}

    # ---------------------------------------------------------------- holding
    def hold(self, a: Arena) -> None:
        """A new arena, created here: held from now on, stored with the next commit."""
        self.arenas[a.tid] = a
        self.store.add_tournament(a)

    def forget(self, aid: str) -> None:
        """Stop running an arena here (another process runs it now)."""
        if self.arenas.pop(aid, None) is not None:
            self.deadlines.cancel(aid)
        for key in [k for k in self._due if k.startswith(aid + "/")]:
            self._due.pop(key).cancel()

    def adopt(self, a: Arena, races: list[Race]) -> None:
        """Hold an arena rebuilt from the store, with those of its races already loaded (each
        other one joins it as it is loaded: :meth:`adopt_race`); its pairing goes on at once."""
        self.arenas[a.tid] = a
        for race in races:
            self.adopt_race(a, race)
        now = self.clock()
        due = a.next_deadline(now)
        if due is not None and due <= now:
            self._on_deadline(a.tid)  # those who wait are paired in this very commit
        else:
            self.deadlines.set(a.tid, due)

    def adopt_race(self, a: Arena, race: Race) -> None:
        """A race of an adopted arena, rebuilt from the store: a race that ended without its
        result reaching the arena (its process died, or the arena's write failed, between the
        two writes) gives it now, and the seats of a race not yet sat down in are told again:
        the ``paired`` of a process that died right after its commit may never have left it
        (its entrant would lose the race for not coming, and be paused)."""
        players = a.running.get(race.race)
        if players is None or self.arenas.get(a.tid) is not a:
            return
        self.seats[race.race] = (a.tid, {f"p{i + 1}": p for i, p in enumerate(players)})
        self._label(a, race)
        if race.status == "finished":
            self.race_over(race)
        elif race.status == "lobby":
            self._seat(a, race)

    def race_ids(self, a: Arena) -> list[str]:
        """The arena's races that may still be under way (to load with it)."""
        return list(a.running)

    # ---------------------------------------------------------------- writing
    def queue(self, a: Arena, out: TOutcome, now: int) -> None:
        """Queue ``out``'s writes: the arena's log and the races it pairs, in one commit."""
        self._write_log(a, out)
        out.created += [self._race(a, plan.race, plan.entrants, now) for plan in out.plans]

    def _race(self, a: Arena, race_id: str, players: list[str], now: int) -> Race:
        s = a.settings
        race = Race(race_id, s.game, self.deals.draw(s.game, False), self.entropy.salt(),
                    Options(2, s.time_limit, rated=s.rated, kind="arena"), now,
                    self.entropy.token(), countdown_ms=self.countdown_ms,
                    seated_until=now + SEAT_GRACE_S * 1000, forfeit=True)
        self.races.hold(race)
        entries = []
        seats: dict[str, str] = {}
        for pid in players:
            e = a.entrants[pid]
            joined = race.join(e.name, self.entropy.token(), now, pid=pid, rating=e.rating,
                               provisional=e.provisional, net=e.net, account=e.account)
            assert joined.acted is not None
            seats[joined.acted] = pid
            entries += joined.log
        self.store.append(entries)
        self.seats[race_id] = (a.tid, seats)
        self._label(a, race)
        return race

    @staticmethod
    def _label(a: Arena, race: Race) -> None:
        """What a race of an arena shows its pages of the arena (not durable)."""
        race.arena = {"arena": a.tid, "name": a.settings.name}

    # --------------------------------------------------------------- emitting
    def emit(self, a: Arena, out: TOutcome) -> None:
        """Send a committed outcome: the views and tables (see the module docstring), and
        each paired entrant's seat."""
        for ev in out.events:
            if ev.kind == "arena":
                self._soon(a, "view", VIEW_EVERY)
            elif ev.kind == "arena_standings":
                self._soon(a, "standings", STANDINGS_EVERY)
                self._soon(a, "table", ENTRANTS_TABLE_EVERY)
            elif ev.kind == "arena_over":
                self._send(a, "over")
        for race in out.created:
            self.races.arm(race)
            self._seat(a, race)
        self.deadlines.set(a.tid, a.next_deadline(self.clock()))

    def _seat(self, a: Arena, race: Race) -> None:
        _, seats = self.seats[race.race]
        for player, pid in seats.items():
            racer = race.racers[player]
            others = [r for r in race.racers.values() if r is not racer]
            msg = messages.paired(race, racer, others)
            msg["arena"] = a.tid
            self.publish(a.tid, Event(msg, urgent=True, to=pid))

    def seat_messages(self, a: Arena, pid: str) -> list[dict[str, object]]:
        """An entrant's seat in the race he is in, if it has not ended (he came back)."""
        e = a.entrants.get(pid)
        race = self.races.get(e.racing) if e is not None and e.racing else None
        if race is None or race.status == "finished":
            return []
        player = next((p for p, who in self.seats.get(race.race, ("", {}))[1].items()
                       if who == pid), None)
        if player is None:
            return []
        msg = messages.paired(race, race.racers[player],
                              [r for p, r in race.racers.items() if p != player])
        msg["arena"] = a.tid
        return [msg]

    def _soon(self, a: Arena, what: str, every: float) -> None:
        """Send ``what`` now, or once ``every`` seconds have passed since it was last sent."""
        key = f"{a.tid}/{what}"
        if key in self._due:
            return
        loop = asyncio.get_running_loop()
        wait = self._sent.get(key, 0.0) + every - loop.time()
        if wait <= 0:
            self._send(a, what)
        else:
            self._due[key] = loop.call_later(wait, self._send, a, what)

    def _send(self, a: Arena, what: str) -> None:
        key = f"{a.tid}/{what}"
        self._due.pop(key, None)
        self._sent[key] = asyncio.get_running_loop().time()
        if self.arenas.get(a.tid) is not a:
            return  # let go meanwhile
        now = self.clock()
        channel = a.tid
        if what == "view":
            msg = arena_messages.view(a, now)
        elif what == "standings":
            msg, channel = arena_messages.standings(a), arena_messages.watchers(a.tid)
        elif what == "table":
            msg = arena_messages.standings(a)
        else:
            msg = arena_messages.over(a)
        self.publish(channel, Event(msg, urgent=True))

    # ------------------------------------------------------------------ races
    def race_over(self, race: Race) -> None:
        """A race ended: if it is an arena's, its result goes there."""
        seat = self.seats.get(race.race)
        if seat is None:
            return
        aid, seats = seat
        a = self.arenas.get(aid)
        if a is None:
            return
        places = race.places()
        counts: dict[int, int] = {}
        for place in places.values():
            counts[place] = counts.get(place, 0) + 1
        results = []
        for player, pid in seats.items():
            racer = race.racers[player]
            # A racer who made no move by his own doing (he left, never came) loses; one whose
            # opponent resigned before he could move has won.
            absent = racer.moves == 0 and walked_out(race, racer)
            flagged = race.started_at is not None and fairplay.signals(
                race.game, race.seed, racer.actions, racer.times, race.started_at,
                racer.finished_at is not None, racer.hints).flagged
            results.append(ArenaResult(pid, places[player], counts[places[player]] > 1,
                                       not absent, flagged))
        out = a.race_over(race.race, results, self.clock())
        gone = self.gone.get(aid, set())
        for pid in seats.values():
            if pid in gone:
                gone.discard(pid)
                out.extend(a.pause(pid, self.clock()))
        if out.log or out.events:
            self.record(a, out)
            for pid in seats.values():
                e = a.entrants.get(pid)
                if e is not None:
                    self.store.after_commit(lambda e=e: self.publish(  # type: ignore[misc]
                        a.tid, Event(arena_messages.you(a, e), to=e.player)))
        self.seats.pop(race.race, None)

    # --------------------------------------------------------------- presence
    def presence(self, aid: str, pid: str, connections: int) -> None:
        """An entrant has ``connections`` live connections on the arena now: with none for
        :data:`AWAY_MS`, he is paused — then if he is not racing, else when his race ends."""
        key = f"{aid}/{pid}"
        if connections:
            self.gone.get(aid, set()).discard(pid)
            self.away.cancel(key)
        elif aid in self.arenas:
            self.away.set(key, self.clock() + AWAY_MS)

    def _away(self, key: str) -> None:
        aid, pid = key.split("/", 1)
        gone = self.gone.setdefault(aid, set())
        a = self.arenas.get(aid)
        e = a.entrants.get(pid) if a is not None else None
        if a is None or e is None or e.paused or not self.store.healthy:
            return
        if e.racing is not None:
            gone.add(pid)
            return
        out = a.pause(pid, self.clock())
        if out.log:
            self.record(a, out)

    # ---------------------------------------------------------------- timers
    def _on_deadline(self, aid: str) -> None:
        a = self.arenas.get(aid)
        if a is None:
            return
        now = self.clock()
        if not self.store.healthy:
            self.deadlines.set(aid, now + 1000)
            return
        out = a.tick(now)
        if out.log or out.events:
            self.record(a, out)
        else:
            self.deadlines.set(aid, a.next_deadline(self.clock()))

    def close(self) -> None:
        super().close()
        self.away.close()
        for handle in self._due.values():
            handle.cancel()
        self._due.clear()
