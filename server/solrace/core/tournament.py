"""The tournament: a sans-I/O state machine for a series of races run by a host.

Like :class:`solrace.core.race.Race`, a :class:`Tournament` takes commands plus the time and
returns a :class:`TOutcome` — the log entries to make durable, the numbered tournament events,
and the races to create now (``plans``) — and never does I/O, reads the clock or builds wire
messages. Randomness (the secret seeds of new deals) comes in through a ``draw`` function, and
the seeds drawn go into the log, so replaying the log rebuilds the same tournament. Races are
run by the hub as ordinary races; when one ends, :meth:`Tournament.race_over` takes its result.

Formats (the contract's "Tournaments", docs/protocol.md):

- **rounds** (duplicate): round *n* plays ``games[(n-1) % len(games)]``; every entrant plays the
  same deal; a field larger than ``race_size`` is split into the fewest races of at most
  ``race_size``, as even as possible, all on that seed. Places over the whole field, as a race
  orders its standings (finishers by time; the others by cards home, then by who reached that
  count first, then entry order); points = entrants in the round − place. The table: points,
  then cards home over all rounds, then total time of finished deals, then entry order.
- **knockout**: a bracket seeded by entry order (byes to the earliest entrants), best-of-N
  matches of two-racer races on a fresh deal each, the winner of a game is the race's first
  place, a match goes to whoever first wins more than half of ``best_of``; an entrant absent
  when a game starts loses it. Games go in waves: the next game of every open match of the
  bracket round, all started together.
"""

from __future__ import annotations

import hmac
from typing import Any

from solrace.core.errors import Code
from solrace.core.tournament_parts import (
    Draw,
    Entrant,
    Match,
    Message,
    RacePlan,
    Result,
    Round,
    Settings,
    Status,
    TEvent,
    TLogEntry,
    TournamentError,
    TOutcome,
    bracket_order,
    shared_places,
    split,
)
from solrace.core.tournament_table import knockout_table, round_places, rounds_table
from solrace.settings import EMPTY_TOURNAMENT_TTL_MS, MAX_TOURNAMENT_BOTS, TOURNAMENT_ENTRY_TTL_MS

__all__ = ["Draw", "Entrant", "Match", "RacePlan", "Result", "Round", "Settings", "TEvent",
           "TLogEntry", "TOutcome", "Tournament", "TournamentError", "bracket_order",
           "shared_places", "split"]


class Tournament:
    """One tournament (see the module docstring)."""

    def __init__(self, tid: str, settings: Settings, host_token: str, created_at: int) -> None:
        self.tid = tid
        self.settings = settings
        self.host_token = host_token
        self.created_at = created_at
        self.status: Status = "entry"
        self.entry_open = True
        self.paused = False
        self.v = 0
        self.entrants: dict[str, Entrant] = {}
        self.rounds: list[Round] = []
        self.matches: list[Match] = []
        self.next_at: int | None = None  # the next round starts by itself then
        self.race_count = 0
        self.finished_at: int | None = None
        #: Why it ended: "done" (its last round), "host" (the host ended it), "expired"
        #: (nobody started it in time).
        self.reason: str | None = None
        #: The client address that created it, for its share of the tournaments (not
        #: durable: after a restart it counts for nobody).
        self.creator: str | None = None

    # --------------------------------------------------------------- helpers
    def _event(self, kind: str = "tournament", race: str | None = None) -> TEvent:
        self.v += 1
        return TEvent(self.v, kind, race)

    def _log(self, at: int, kind: str, data: Any = None) -> TLogEntry:
        return TLogEntry(self.tid, at, kind, data)

    def is_host(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self.host_token.encode())

    def _host(self, token: str) -> None:
        if not self.is_host(token):
            raise TournamentError(Code.FORBIDDEN, "only the host (with the host token) can do that")

    def find_token(self, token: str) -> Entrant | None:
        found = None
        for entrant in self.entrants.values():
            if hmac.compare_digest(entrant.token.encode(), token.encode()):
                found = entrant
        return found

    def active(self) -> list[Entrant]:
        """Entrants still in, in entry order."""
        return [e for e in self.entrants.values() if not e.removed]

    @property
    def total_rounds(self) -> int:
        if self.settings.format == "rounds":
            return self.settings.rounds or len(self.settings.games)
        size = 1
        while size < max(2, len(self.active())):
            size *= 2
        return size.bit_length() - 1

    def game_of(self, number: int) -> str:
        games = self.settings.games
        return games[(number - 1) % len(games)]

    def current(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    def waiting(self) -> bool:
        """Is something ready to start (the first round, or the next one)?"""
        if self.status == "entry":
            return False
        if self.status == "finished":
            return False
        cur = self.current()
        return cur is None or cur.over

    def entry_ends(self) -> int:
        """When a tournament nobody starts closes: soon if nobody entered it."""
        ttl = TOURNAMENT_ENTRY_TTL_MS if self.entrants else EMPTY_TOURNAMENT_TTL_MS
        return self.created_at + ttl

    def races_of_next_round(self) -> int:
        """How many races the next round (or wave of knockout games) would create: the
        most it can be."""
        active = len(self.active())
        if self.settings.format == "rounds":
            return len(split(active, self.settings.race_size))
        return max(1, active // 2)

    def next_game(self) -> str:
        """The game the next round (or wave of knockout games) will play."""
        if self.settings.format == "rounds":
            return self.game_of(len(self.rounds) + 1)
        if not self.matches:
            return self.game_of(1)
        level = self._bracket_round()
        return self.game_of(level if self._open_matches(level) else level + 1)

    def next_deadline(self) -> int | None:
        if self.status == "entry":
            return self.entry_ends()
        if self.status == "running" and not self.paused and self.waiting():
            return self.next_at
        return None

    # -------------------------------------------------------------- commands
    def join(self, name: str, token: str, bot: bool, code: str | None, now: int,
             player: str | None = None) -> TOutcome:
        """A new entrant; ``player``: the id of the player who entered (kept, so that a closure
        of his account takes his place: :meth:`close_account`)."""
        if self.status != "entry" or not self.entry_open:
            raise TournamentError(Code.ENTRY_CLOSED, "entry to this tournament is closed")
        if self.settings.code is not None and not hmac.compare_digest(
                (code or "").encode(), self.settings.code.encode()):
            raise TournamentError(Code.FORBIDDEN, "this tournament needs its entry code")
        if len(self.active()) >= self.settings.max_entrants:
            raise TournamentError(Code.TOURNAMENT_FULL,
                                  f"the tournament has {self.settings.max_entrants} entrants")
        return self._join(name, token, bot, now, player=player)

    def _join(self, name: str, token: str, bot: bool, now: int,
              level: int | None = None, player: str | None = None) -> TOutcome:
        entrant = f"e{len(self.entrants) + 1}"
        self.entrants[entrant] = Entrant(entrant, name, token, bot, len(self.entrants), level=level,
                                         player=player)
        data = {"name": name, "token": token, "bot": bot}
        if level is not None:
            data["level"] = level
        if player is not None:
            data["player"] = player
        return TOutcome(log=[self._log(now, "join", data)], events=[self._event()], entrant=entrant)

    def add_bot(self, host_token: str, name: str, token: str, level: int,
                now: int) -> TOutcome:
        """The host enters a house bot of ``level`` (before the start, within ``max_entrants``,
        at most ``MAX_TOURNAMENT_BOTS``): seated like anyone, the server plays its races."""
        self._host(host_token)
        if self.status != "entry":
            raise TournamentError(Code.TOURNAMENT_STARTED, "the tournament has started")
        if len(self.active()) >= self.settings.max_entrants:
            raise TournamentError(Code.TOURNAMENT_FULL, "the tournament is full")
        if sum(1 for e in self.active() if e.level is not None) >= MAX_TOURNAMENT_BOTS:
            raise TournamentError(Code.LIMIT_REACHED, f"a tournament has at most "
                                  f"{MAX_TOURNAMENT_BOTS} house bots")
        return self._join(name, token, True, now, level)

    def remove(self, token: str, entrant: str, now: int) -> TOutcome:
        """The host takes an entrant out: not seated in later races (the races he is in go on
        without him as they are)."""
        self._host(token)
        e = self.entrants.get(entrant)
        if e is None or e.removed:
            raise TournamentError(Code.NOT_FOUND, f"no entrant {entrant[:16]!r}")
        if self.status == "finished":
            raise TournamentError(Code.TOURNAMENT_OVER, "the tournament is over")
        e.removed = True
        return TOutcome(log=[self._log(now, "remove", entrant)], events=[self._event()])

    def set_entry(self, token: str, open_: bool, now: int) -> TOutcome:
        self._host(token)
        if self.status != "entry":
            raise TournamentError(Code.TOURNAMENT_STARTED, "the tournament has started")
        self.entry_open = open_
        return TOutcome(log=[self._log(now, "entry", open_)], events=[self._event()])

    def set_paused(self, token: str, paused: bool, now: int) -> TOutcome:
        """Pause or resume between rounds: while paused, no round starts by itself."""
        self._host(token)
        if self.status == "finished":
            raise TournamentError(Code.TOURNAMENT_OVER, "the tournament is over")
        self.paused = paused
        if not paused and self.waiting() and self.settings.gap:
            self.next_at = now + self.settings.gap * 1000
        return TOutcome(log=[self._log(now, "pause", paused)], events=[self._event()])

    def start(self, token: str, now: int, draw: Draw) -> TOutcome:
        """Close entry and start the first round (or the bracket's first games)."""
        self._host(token)
        if self.status != "entry":
            raise TournamentError(Code.TOURNAMENT_STARTED, "the tournament has started")
        if len(self.active()) < 2:
            raise TournamentError(Code.NO_RACERS, "a tournament needs at least two entrants")
        self.status = "running"
        self.entry_open = False
        out = TOutcome(log=[self._log(now, "start")])
        if self.settings.format == "knockout":
            self._seed_bracket()
        out.extend(self._next_round(now, draw))
        return out

    def next(self, token: str, now: int, draw: Draw) -> TOutcome:
        """The host starts what is waiting now (the next round, or the next games)."""
        self._host(token)
        if not self.waiting():
            raise TournamentError(Code.NOTHING_WAITING,
                                  "nothing is waiting: the current races are not over yet")
        return self._next_round(now, draw)

    def finish(self, token: str, now: int) -> TOutcome:
        """The host ends the tournament now: the table as it stands is final (races under way
        go on, but no longer count)."""
        self._host(token)
        if self.status == "finished":
            raise TournamentError(Code.TOURNAMENT_OVER, "the tournament is over")
        return self._finish(now, by_host=True)

    def redeal(self, token: str, number: int, now: int, draw: Draw) -> TOutcome:
        """Deal a round again that a fault spoiled: a new seed, new races for the same seats;
        the old races no longer count (and the hub ends them)."""
        self._host(token)
        if self.status != "running" or not self.rounds or self.rounds[-1].number != number:
            raise TournamentError(Code.BAD_MESSAGE, "only the current round can be dealt again")
        old = self.rounds[-1]
        if self.settings.format == "knockout":
            raise TournamentError(Code.BAD_MESSAGE, "a knockout deals a fresh deal every game: "
                                  "re-deal is for rounds")
        seed = draw(self.game_of(number))
        entry = {"round": number, "seed": seed, "void": list(old.races),
                 "races": self._seat_round(number, seed, [e for r in old.races
                                                          for e in old.seats[r]])}
        out = TOutcome(log=[self._log(now, "redeal", entry)])
        out.extend(self._apply_redeal(entry))
        return out

    def race_over(self, race: str, results: list[Result], now: int) -> TOutcome:
        """A race of this tournament ended with ``results`` (every seated entrant)."""
        cur = self.current()
        if self.status != "running" or cur is None or race not in cur.races:
            return TOutcome()
        if race in cur.results:
            return TOutcome()
        data = [[r.entrant, r.finished, r.time_ms, r.cards, r.reached_ms, r.resigned,
                 *([True] if r.flagged else [])] for r in results]
        out = TOutcome(log=[self._log(now, "result", {"race": race, "results": data})])
        out.extend(self._apply_result(race, results, now))
        return out

    def tick(self, now: int, draw: Draw) -> TOutcome:
        deadline = self.next_deadline()
        if deadline is None or now < deadline:
            return TOutcome()
        if self.status == "entry":  # nobody started it: it holds no place any more
            out = self._finish(deadline, reason="expired")
            out.log.append(self._log(deadline, "expire"))
            return out
        return self._next_round(deadline, draw)

    # ---------------------------------------------------------------- rounds
    def _seat_round(self, number: int, seed: int, entrants: list[str]) -> list[Any]:
        """Rounds format: [[race id, [entrants]], ...] on one seed."""
        seats = []
        i = 0
        for size in split(len(entrants), self.settings.race_size):
            self.race_count += 1
            seats.append([f"{self.tid}-{self.race_count}", entrants[i:i + size]])
            i += size
        return seats

    def _next_round(self, now: int, draw: Draw) -> TOutcome:
        if self.settings.format == "knockout":
            return self._next_games(now, draw)
        number = len(self.rounds) + 1
        if number > self.total_rounds:
            return self._finish(now)
        seed = draw(self.game_of(number))
        entry = {"round": number, "seed": seed,
                 "races": self._seat_round(number, seed, [e.entrant for e in self.active()])}
        out = TOutcome(log=[self._log(now, "round", entry)])
        out.extend(self._apply_round(entry))
        return out

    def _apply_round(self, entry: dict[str, Any]) -> TOutcome:
        number = entry["round"]
        rnd = Round(number, self.game_of(number))
        plans = []
        for race, entrants in entry["races"]:
            rnd.races.append(race)
            rnd.seats[race] = list(entrants)
            rnd.seeds[race] = entry["seed"]
            plans.append(RacePlan(race, rnd.game, entry["seed"], list(entrants), False, number))
        self.rounds.append(rnd)
        self.next_at = None
        return TOutcome(events=[self._event()], plans=plans)

    def _apply_redeal(self, entry: dict[str, Any]) -> TOutcome:
        cur = self.rounds[-1]
        cur.void += entry["void"]
        cur.races, cur.seats, cur.seeds, cur.results = [], {}, {}, {}
        plans = []
        for race, entrants in entry["races"]:
            cur.races.append(race)
            cur.seats[race] = list(entrants)
            cur.seeds[race] = entry["seed"]
            plans.append(RacePlan(race, cur.game, entry["seed"], list(entrants), False,
                                  cur.number))
        return TOutcome(events=[self._event()], plans=plans)

    def _apply_result(self, race: str, results: list[Result], now: int) -> TOutcome:
        cur = self.current()
        assert cur is not None
        cur.results[race] = results
        out = TOutcome(events=[self._event("standings", race)])
        if self.settings.format == "knockout":
            out.extend(self._knockout_result(race, results, now))
        elif all(r in cur.results for r in cur.races):
            cur.over = True
            out.extend(self._round_done(now))
        return out

    def _round_done(self, now: int) -> TOutcome:
        """The round (or a knockout's wave of games) is over: the ``standings`` just sent say
        so (with when the next one starts), no view of its own."""
        if self.settings.format == "rounds" and len(self.rounds) >= self.total_rounds:
            return self._finish(now)
        if self.settings.gap and not self.paused:
            self.next_at = now + self.settings.gap * 1000
        return TOutcome()

    def _finish(self, now: int, by_host: bool = False, reason: str | None = None) -> TOutcome:
        self.status = "finished"
        self.finished_at = now
        self.reason = reason or ("host" if by_host else "done")
        self.next_at = None
        log = [self._log(now, "finish")] if by_host else []
        return TOutcome(log=log, events=[self._event("tournament_over")], finished=True)

    # -------------------------------------------------------------- knockout
    def _seed_bracket(self) -> None:
        entrants = [e.entrant for e in self.active()]
        size = 2
        while size < len(entrants):
            size *= 2
        order = bracket_order(size)
        slots: list[str | None] = [entrants[s - 1] if s <= len(entrants) else None
                                   for s in order]
        self.matches = []
        for i in range(0, size, 2):
            match = Match(len(self.matches) + 1, 1, [slots[i], slots[i + 1]])
            self._maybe_bye(match)
            self.matches.append(match)

    @staticmethod
    def _maybe_bye(match: Match) -> None:
        a, b = match.entrants
        if (a is None) != (b is None):
            match.winner = a or b

    def _open_matches(self, bracket_round: int) -> list[Match]:
        return [m for m in self.matches if m.round == bracket_round and m.winner is None]

    def _bracket_round(self) -> int:
        return max((m.round for m in self.matches), default=1)

    def _next_games(self, now: int, draw: Draw) -> TOutcome:
        """The next game of every open match: of this bracket round, or, once all of its
        matches are decided, of the next one (the winners paired)."""
        level = self._bracket_round()
        if not self._open_matches(level):
            if len([m for m in self.matches if m.round == level]) <= 1:
                return self._finish(now)
            self._advance(level)
            level += 1
        races: list[list[Any]] = []
        seeds: dict[str, int] = {}
        matches: dict[str, int] = {}
        for match in self._open_matches(level):
            self.race_count += 1
            race = f"{self.tid}-{self.race_count}"
            seeds[race] = draw(self.game_of(level))
            races.append([race, list(match.entrants)])
            matches[race] = match.match
        entry = {"round": level, "races": races, "seeds": seeds, "matches": matches}
        out = TOutcome(log=[self._log(now, "round", entry)])
        out.extend(self._apply_games(entry))
        return out

    def _apply_games(self, entry: dict[str, Any]) -> TOutcome:
        for race, number in entry["matches"].items():
            self.matches[number - 1].games.append(race)
        new_round = not self.rounds or self.rounds[-1].number != entry["round"]
        if new_round:
            self.rounds.append(Round(entry["round"], self.game_of(entry["round"])))
        cur = self.rounds[-1]
        cur.over = False
        plans = []
        for race, entrants in entry["races"]:
            seed = entry["seeds"][race]
            cur.races.append(race)
            cur.seats[race] = list(entrants)
            cur.seeds[race] = seed
            plans.append(RacePlan(race, cur.game, seed, list(entrants), True, cur.number))
        self.next_at = None
        return TOutcome(events=[self._event()], plans=plans)

    def _knockout_result(self, race: str, results: list[Result], now: int) -> TOutcome:
        match = next(m for m in self.matches if race in m.games)
        ordered = sorted(results, key=lambda r: r.key(self.entrants[r.entrant].order))
        winner = ordered[0].entrant
        match.wins[winner] = match.wins.get(winner, 0) + 1
        if match.wins[winner] * 2 > self.settings.best_of:
            match.winner = winner
        cur = self.current()
        assert cur is not None
        if not all(r in cur.results for r in cur.races):
            return TOutcome()
        cur.over = True  # this wave of games is over
        level = [m for m in self.matches if m.round == cur.number]
        if len(level) == 1 and level[0].winner is not None:
            return self._finish(now)  # the final is decided
        return self._round_done(now)

    def _advance(self, level: int) -> None:
        """Every match of bracket round ``level`` is decided: pair the winners."""
        done = [m for m in self.matches if m.round == level]
        for i in range(0, len(done), 2):
            match = Match(len(self.matches) + 1, level + 1, [done[i].winner, done[i + 1].winner])
            self._maybe_bye(match)
            self.matches.append(match)

    # ------------------------------------------------------------- standings
    def standings(self) -> list[Message]:
        """The table as it stands (:mod:`solrace.core.tournament_table`)."""
        if self.settings.format == "knockout":
            return knockout_table(self.entrants, self.matches, self.status == "finished")
        return rounds_table(self.entrants, self.rounds, self.flagged())

    def flagged(self) -> set[str]:
        """Entrants with a result played at machine speed: listed without a place (kept off
        the prizes; solrace.core.fairplay)."""
        return {r.entrant for rnd in self.rounds for results in rnd.results.values()
                for r in results if r.flagged}

    def round_places(self, rnd: Round) -> dict[str, int]:
        """Places over the whole field of a round (1 = best; equal results share one; a
        closed entrant's after the others)."""
        return round_places(self.entrants, rnd,
                            {e.entrant for e in self.entrants.values() if e.closed})

    def close_account(self, player: str, now: int) -> TOutcome:
        """The account ``player`` was closed for fair play: his entrants (the ones he entered
        as, see :meth:`join`) lose their places, now and in every table built after this
        (durable: a ``closed`` entry). Nothing if he has none here, or they are closed
        already."""
        if not any(e.player == player and not e.closed for e in self.entrants.values()):
            return TOutcome()
        out = TOutcome(log=[self._log(now, "closed", {"player": player})])
        out.extend(self._apply_closed(player))
        return out

    def _apply_closed(self, player: str) -> TOutcome:
        for e in self.entrants.values():
            if e.player == player:
                e.closed = True
        return TOutcome(events=[self._event("standings")])

    def bracket(self) -> Message | None:
        if self.settings.format != "knockout":
            return None
        return {"matches": [{"match": m.match, "round": m.round, "entrants": m.entrants,
                             "games": m.games, "wins": m.wins, "winner": m.winner}
                            for m in self.matches]}

    # ----------------------------------------------------------------- replay
    def replay(self, entry: TLogEntry) -> None:
        """Re-apply one durable log entry when loading a tournament."""
        kind, data, at = entry.kind, entry.data, entry.at
        if kind == "join":
            self._join(data["name"], data["token"], bool(data.get("bot")), at,
                       data.get("level"), data.get("player"))
        elif kind == "closed":
            self._apply_closed(data["player"])
        elif kind == "remove":
            self.entrants[data].removed = True
            self._event()
        elif kind == "entry":
            self.entry_open = bool(data)
            self._event()
        elif kind == "pause":
            self.paused = bool(data)
            if not self.paused and self.waiting() and self.settings.gap:
                self.next_at = at + self.settings.gap * 1000
            self._event()
        elif kind == "start":
            self.status = "running"
            self.entry_open = False
            if self.settings.format == "knockout":
                self._seed_bracket()
        elif kind == "round":
            self.race_count += len(data["races"])
            if self.settings.format == "knockout":
                while data["round"] > self._bracket_round():
                    self._advance(self._bracket_round())
                self._apply_games(data)
            else:
                self._apply_round(data)
        elif kind == "redeal":
            self.race_count += len(data["races"])
            self._apply_redeal(data)
        elif kind == "result":
            results = [Result(*row) for row in data["results"]]
            self._apply_result(data["race"], results, at)
        elif kind == "finish":
            self._finish(at, by_host=True)
        elif kind == "expire":
            self._finish(at, reason="expired")
        else:
            raise ValueError(f"unknown tournament log entry {kind!r}")
