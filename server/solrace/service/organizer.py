"""The organizer: the tournaments this process holds, next to the hub's races.

It carries out what a :class:`~solrace.core.tournament.Tournament` decides: the races of a round
are created (their entrants seated, with the tokens each entrant gets in his ``round`` message)
and written in the same commit as the tournament's log entry; the races of one round share one
:class:`~solrace.core.shared_deal.SharedDeal`, so that the views rule treats them as one race
and none of them reveals anything until all are over (then the others get ``reveal``); a race's
result goes to its tournament when it ends; the next round starts after the gap (a timer) or
when the host says so. Everything goes through the hub's commit-then-emit path: nothing is sent
before it is durable.

The organizer does not know the hub: it is given the store it writes to, the bus it publishes
on, the clock, the deals, and :class:`~solrace.service.unit_director.RacePorts`, the few things
it asks of whoever holds the races (hold a new race, record an outcome, set a race's timer, is
there room for more): what it shares with the arenas' director is
:class:`~solrace.service.unit_director.UnitDirector`."""

from __future__ import annotations

import logging
from collections.abc import Callable

from solrace.core import fairplay
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.shared_deal import SharedDeal
from solrace.core.tournament import Draw, RacePlan, Result, Tournament, TOutcome
from solrace.protocol import messages
from solrace.protocol.event import Event
from solrace.service.unit_director import RacePorts, UnitDirector
from solrace.settings import DEALS_RETRY_MS, ROOM_RETRY_MS
from solrace.solver.deal_source import DealSource
from solrace.store.base import Store

log = logging.getLogger(__name__)


class Organizer(UnitDirector[Tournament]):
    """See the module docstring."""

    def __init__(self, store: Store, publish: Callable[[str, Event], None],
                 clock: Callable[[], int], deals: DealSource, countdown_ms: int,
                 races: RacePorts) -> None:
        super().__init__(store, publish, clock, deals, countdown_ms, races)
        self.tournaments: dict[str, Tournament] = {}
        #: Each tournament race: (tournament, round, player -> entrant).
        self.seats: dict[str, tuple[str, int, dict[str, str]]] = {}
        #: Entrants of each tournament by the client address they joined from (not durable:
        #: after a restart the share counts from zero again).
        self.joined_from: dict[str, dict[str, int]] = {}

    def hold(self, t: Tournament) -> None:
        """A new tournament, created here: held from now on, stored with the next commit."""
        self.tournaments[t.tid] = t
        self.store.add_tournament(t)

    def forget(self, tid: str) -> None:
        """Stop running a tournament here (another process runs it now)."""
        if self.tournaments.pop(tid, None) is not None:
            self.deadlines.cancel(tid)

    def entered(self, tid: str, address: str) -> None:
        """An entrant joined tournament ``tid`` from ``address``."""
        by = self.joined_from.setdefault(tid, {})
        by[address] = by.get(address, 0) + 1

    def entrants_from(self, tid: str, address: str) -> int:
        return self.joined_from.get(tid, {}).get(address, 0)

    def drawer(self, t: Tournament) -> Draw:
        """The tournament's source of new deals: secret seeds (winnable ones if it asks)."""
        winnable = t.settings.winnable
        return lambda game: self.deals.draw(game, winnable)

    # ------------------------------------------------------------- writing
    def queue(self, t: Tournament, out: TOutcome, now: int) -> None:
        """Queue ``out``'s writes: the tournament's log, and the races it creates (with
        their seats), all in the same commit."""
        self._write_log(t, out)
        created = [self._race(t, plan, now) for plan in out.plans]
        if created:
            self._group(t, created)
        out.created += created

    def _race(self, t: Tournament, plan: RacePlan, now: int) -> Race:
        s = t.settings
        race = Race(
            plan.race, plan.game, plan.seed, self.entropy.salt(),
            Options(len(plan.entrants), s.time_limit, True, False, False, s.winnable), now,
            t.host_token,
            countdown_ms=self.countdown_ms, seated_until=now + s.grace * 1000,
            forfeit=plan.forfeit,
        )
        self.races.hold(race)
        seats: dict[str, str] = {}
        log_entries = []
        for entrant_id in plan.entrants:
            entrant = t.entrants[entrant_id]
            joined = race.join(entrant.name, self.entropy.token(), now, bot=entrant.bot,
                               level=entrant.level)
            assert joined.acted is not None
            seats[joined.acted] = entrant_id
            log_entries += joined.log
        self.store.append(log_entries)
        self.seats[race.race] = (t.tid, plan.round, seats)
        self._label(t, race, plan.round)
        return race

    @staticmethod
    def _label(t: Tournament, race: Race, round_: int) -> None:
        """What a race of a tournament shows its pages of the tournament."""
        race.tournament = {"tournament": t.tid, "name": t.settings.name, "round": round_,
                           "rounds": t.total_rounds}

    def _group(self, t: Tournament, races: list[Race]) -> None:
        """The races of one round of the rounds format play one deal: one group."""
        if t.settings.format != "rounds":
            return
        by_round: dict[int, list[Race]] = {}
        for race in races:
            by_round.setdefault(self.seats[race.race][1], []).append(race)
        for group in by_round.values():
            deal = SharedDeal(group)
            for race in group:
                race.deal = deal

    # ------------------------------------------------------------ emitting
    def emit(self, t: Tournament, out: TOutcome) -> None:
        """Send a committed outcome: the tournament's events, each seated entrant's
        ``round``, and the new races' timers."""
        publish = self.publish
        for ev in out.events:  # rare, and awaited: never held for a batch
            publish(t.tid, Event(messages.tournament_event(t, ev), urgent=True))
        for race in out.created:
            self.races.arm(race)
            self.races.play_bots(race)
            _, round_, seats = self.seats[race.race]
            for player, entrant in seats.items():
                publish(t.tid, Event(messages.seat(t, round_, race, player), to=entrant))
        cur = t.current()
        if cur is not None:
            for race_id in cur.void:  # a re-dealt round: its old races end now
                race = self.races.get(race_id)
                if race is not None and race.status == "running":
                    self.races.record(race, race.abandon(self.clock()))
                elif race is not None and race.status in ("lobby", "countdown"):
                    self.races.record(race, race.tick(race.created_at + 10**12))
        self.deadlines.set(t.tid, t.next_deadline())
        if out.finished:
            self.deadlines.cancel(t.tid)

    # -------------------------------------------------------------- races
    def race_over(self, race: Race) -> None:
        """A race ended: if it is a tournament's, its result goes there; if it was the last
        of its round's deal, the round's other races reveal theirs."""
        seat = self.seats.get(race.race)
        if seat is None:
            return
        tid, _, seats = seat
        t = self.tournaments.get(tid)
        deal = race.deal
        if len(deal.races) > 1 and deal.revealed:
            for other in deal.races:
                if other is not race:
                    # Numbered like any event of that race (not durable: a race rebuilt from
                    # its log is revealed with its round, and its snapshot says so).
                    self.publish(other.race, Event(messages.event(other, other.reveal())))
        if t is None:
            return
        started = race.started_at or race.finished_at or 0
        results = []
        for player, entrant in seats.items():
            racer = race.racers[player]
            # Entrants are not accounts (no moderator looks at them): only the timing rule,
            # worked out here from the race itself, keeps a machine off the prizes.
            flagged = not racer.bot and race.started_at is not None and fairplay.signals(
                race.game, race.seed, racer.actions, racer.times, race.started_at,
                racer.finished_at is not None, racer.hints).flagged
            results.append(Result(
                entrant, racer.finished_at is not None, race.time_ms(racer),
                racer.game.progress()[0], max(0, racer.reached_at - started), racer.resigned,
                flagged,
            ))
        out = t.race_over(race.race, results, self.clock())
        if out.log or out.events:
            self.record(t, out)

    def _on_deadline(self, tid: str) -> None:
        t = self.tournaments.get(tid)
        if t is None:
            return
        now = self.clock()
        if not self.store.healthy:
            self.deadlines.set(tid, now + 1000)
            return
        if t.status == "running" and not self.races.room(t.races_of_next_round()):
            # The next round does not fit now: it waits for races to end (looked at again).
            log.warning("tournament %s: no room for the next round's races yet", tid)
            self.deadlines.set(tid, now + ROOM_RETRY_MS)
            return
        if t.status == "running" and t.settings.winnable:
            deals, game = self.deals, t.next_game()
            need = t.races_of_next_round() if t.settings.format == "knockout" else 1
            if deals.ready(game) < need:  # its deals are taken from the pool first
                deals.prefetch(game, need)
                self.deadlines.set(tid, now + DEALS_RETRY_MS)
                return
        out = t.tick(now, self.drawer(t))
        if out.log or out.events:
            self.record(t, out)

    # ----------------------------------------------------------- holding
    def adopt(self, t: Tournament, races: list[Race]) -> None:
        """Hold a tournament rebuilt from the store, with its races (seats and deals
        rebuilt from the tournament's rounds)."""
        self.tournaments[t.tid] = t
        by_id = {race.race: race for race in races}
        for rnd in t.rounds:
            group = []
            for race_id in [*rnd.races, *rnd.void]:
                race = by_id.get(race_id)
                if race is None:
                    continue
                entrants = rnd.seats.get(race_id, [])
                seats = {f"p{i + 1}": e for i, e in enumerate(entrants)}
                if not seats:  # a void race: its seats are its racers
                    seats = {p: p for p in race.racers}
                self.seats[race_id] = (t.tid, rnd.number, seats)
                self._label(t, race, rnd.number)
                if race_id in rnd.races:
                    group.append(race)
            if t.settings.format == "rounds" and group:
                deal = SharedDeal(group)
                for race in group:
                    race.deal = deal
        self.deadlines.set(t.tid, t.next_deadline())

    def seat_messages(self, t: Tournament, entrant: str) -> list[dict[str, object]]:
        """The entrant's seats in the races of the current round that have not ended (sent
        again when he comes back)."""
        cur = t.current()
        out: list[dict[str, object]] = []
        if cur is None:
            return out
        for race_id in cur.races:
            race = self.races.get(race_id)
            seat = self.seats.get(race_id)
            if race is None or seat is None or race.status == "finished":
                continue
            for player, e in seat[2].items():
                if e == entrant:
                    out.append(messages.seat(t, cur.number, race, player))
        return out

    def race_ids(self, t: Tournament) -> list[str]:
        return [r for rnd in t.rounds for r in (*rnd.races, *rnd.void)]
