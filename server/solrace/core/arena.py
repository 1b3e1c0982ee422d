"""An arena: a tournament with no host and no rounds. Sans-I/O, like the race room.

From ``starts_at`` to ``ends_at`` every entrant who is not racing and not paused waits, and
two waiting entrants are paired head to head (:meth:`Arena.tick`, which the service runs at
:meth:`Arena.next_deadline`: at most :data:`PAIR_EVERY_MS` after the second one began to
wait, so that a few who free themselves at once are paired among each other by the table,
not by who came first). Whom with whom: the waiting entrants in table order, each with the
nearest in the table, but never the opponent of his last race while anyone else waits.

Each race scores (:meth:`Arena.race_over`): a win 2, a shared first place 1 each, a loss 0; a
win that follows two wins in a row scores 4, and so does every further win of the streak; a
race not won ends the streak. A racer who made no move loses, whatever his place, and is
paused (he is not paired again until he joins again). A result flagged by the fair-play rules
(``machine_speed``, worked out from the race itself when it ends) scores nothing and keeps the
entrant off the table's places. An entrant whose account was closed for fair play
(:meth:`Arena.close_account`, when the service learns of it) is paused for good and kept off
the places too, marked ``closed`` (listed, so that the table still shows why places moved; his
wins never cost anyone points: a loss scores nothing). At ``ends_at`` no new pair is made; the
races under way finish and count; then the arena is over.

Every decision is a log entry (``join``, ``pause``, ``pair``, ``result``, ``closed``,
``finish``) made in the same commit as its outcome's messages go out after, and
:meth:`Arena.replay` rebuilds the arena from them exactly: a process that takes an arena over
(its owner died) goes on from there, with no point lost or counted twice (a race's result is
recorded once: a second one for the same race is ignored). ``v`` counts the entries: every
change is one, so a message carrying a lower ``v`` than one already seen is older (each carries
the whole table as it stood).

What goes out: a change of who is in, who waits or who races is an ``arena`` event (the view;
the service sends it at most once a second per arena: with a thousand entrants a message per
join would be a million rows); a race's result an ``arena_standings`` event; the end
``arena_over``.

The arena is stored as a tournament is (the same tables, or Redis keys under its id), its
settings saying ``kind: "arena"``; its races are ``{id}-1``, ``{id}-2``… so that they share its
unit (one owner, one lease, together).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from solrace.core.errors import Code
from solrace.core.tournament_parts import RacePlan, TEvent, TLogEntry, TournamentError, TOutcome

Message = dict[str, Any]

#: How long (ms) the first of the waiting entrants waits at most for a pairing once a second one
#: waits: a short batch, so that those who come back together are paired by the table — short,
#: because a racer between two races wants the next one at once (lichess pairs in waves of a few
#: seconds; at a tenth of a second the next race comes before the results page is read).
PAIR_EVERY_MS = 100
#: Points for a win, a shared first place, and a win on a streak.
WIN, SHARED, STREAK_WIN = 2, 1, 4
#: Wins in a row after which a win scores STREAK_WIN.
STREAK_FROM = 2


@dataclass(frozen=True)
class ArenaSettings:
    """What an arena is: ``minutes`` of pairing from ``starts_at`` (unix ms), races of
    ``time_limit`` seconds of ``game``; ``rated`` by the rules of rated play; ``house``: one of
    the house's schedule (else ``creator``, a player's id, made it)."""

    name: str
    game: str
    starts_at: int
    minutes: int
    time_limit: int = 300
    rated: bool = True
    house: bool = False
    creator: str | None = None

    @property
    def ends_at(self) -> int:
        return self.starts_at + self.minutes * 60_000

    def as_record(self) -> Message:
        return {"kind": "arena", **asdict(self)}

    @classmethod
    def from_record(cls, record: Message) -> ArenaSettings:
        return cls(**{k: v for k, v in record.items() if k != "kind"})


@dataclass
class ArenaEntrant:
    """A player in an arena (``player``: his id). ``net``/``account``: as a racer's, for the
    rules of rated play in his races; ``rating``: his shown rating when he joined."""

    player: str
    name: str
    order: int
    account: bool = False
    net: str = ""
    rating: int | None = None
    provisional: bool = True
    points: int = 0
    races: int = 0
    wins: int = 0
    streak: int = 0  # wins in a row, up to now
    paused: bool = False
    flagged: bool = False
    closed: bool = False  # his account was closed for fair play
    racing: str | None = None  # the race he is in
    waiting_since: int | None = None  # when he began to wait to be paired
    last_opponent: str | None = None
    reached_at: int = 0  # when he reached his points (the table's last tie-break)
    #: His results, newest last: "W" (won), "D" (shared first), "L" (lost), "F" (flagged).
    form: list[str] = field(default_factory=list)

    def row(self) -> Message:
        return {"player": self.player, "name": self.name, "points": self.points,
                "races": self.races, "wins": self.wins, "streak": self.streak,
                "racing": self.racing is not None, "paused": self.paused,
                "form": "".join(self.form[-10:]), **({"flagged": True} if self.flagged else {}),
                **({"closed": True} if self.closed else {})}

    @property
    def off(self) -> bool:
        """Kept off the table's places (flagged, or closed)."""
        return self.flagged or self.closed


def _waits(e: ArenaEntrant) -> bool:
    """Does he wait to be paired (not racing, not paused, in since a moment)?"""
    return e.racing is None and not e.paused and not e.closed and e.waiting_since is not None


@dataclass(frozen=True)
class ArenaResult:
    """One racer's result in an arena race, as the race ended: his place (1 is best), whether
    it was shared, whether he made a move, whether the fair-play rules flagged it."""

    player: str
    place: int
    shared: bool
    moved: bool
    flagged: bool = False


class Arena:
    """See the module docstring. ``aid``: its id (a unit id, like a tournament's)."""

    kind = "arena"

    def __init__(self, aid: str, settings: ArenaSettings, created_at: int) -> None:
        self.tid = aid  # the stores keep it as a unit with the tournaments
        self.settings = settings
        self.created_at = created_at
        self.host_token = ""  # no host
        self.v = 0
        self.entrants: dict[str, ArenaEntrant] = {}
        #: Races under way: race id -> its two entrants.
        self.running: dict[str, tuple[str, str]] = {}
        self.results: set[str] = set()  # races whose result counted
        self.pairs = 0  # races made (for their ids)
        self.finished_at: int | None = None
        #: Bumped by every change to the entrants: the table's order and rows below are worked
        #: out once per change (a burst of results tells each racer his row and everyone the
        #: table, and pairing reads the order: with a thousand entrants each sort and each
        #: table is a millisecond or more).
        self._changes = 0
        self._ordered: tuple[int, list[ArenaEntrant], dict[str, int]] | None = None
        self._table: tuple[int, list[Message]] | None = None  # the first rows built

    @property
    def aid(self) -> str:
        return self.tid

    # ------------------------------------------------------------------ helpers
    def status(self, now: int) -> str:
        """``upcoming``, ``running`` (pairing) or ``finished``; between ``ends_at`` and the
        end of the last race it still says ``running`` (races under way count)."""
        if self.finished_at is not None:
            return "finished"
        return "upcoming" if now < self.settings.starts_at else "running"

    def _event(self, kind: str = "arena_standings") -> TEvent:
        return TEvent(self.v, kind, None)

    def _log(self, at: int, kind: str, data: Any = None) -> TLogEntry:
        self.v += 1  # one change, one number (replay counts the same)
        return TLogEntry(self.tid, at, kind, data)

    def waiting(self) -> list[ArenaEntrant]:
        """Entrants who wait to be paired, in table order."""
        return [e for e in self._order() if _waits(e)]

    def next_deadline(self, now: int | None = None) -> int | None:
        """When :meth:`tick` has something to do: the start, the next pairing, the end. Past
        the end (``now``) with races under way: nothing — the last race's result ends it."""
        if self.finished_at is not None:
            return None
        s = self.settings
        if now is not None and now >= s.ends_at and self.running:
            return None
        since = [e.waiting_since for e in self.entrants.values()
                 if e.waiting_since is not None and _waits(e)]
        due = s.ends_at
        if len(since) >= 2:
            due = min(due, max(s.starts_at, min(since) + PAIR_EVERY_MS))
        return due

    # ----------------------------------------------------------------- commands
    def join(self, player: str, name: str, now: int, account: bool = False, net: str = "",
             rating: int | None = None, provisional: bool = True) -> TOutcome:
        """The player enters (before the start or while it runs), or comes back after a
        pause: he waits to be paired from the start on. TournamentError ``tournament_over``
        once it is over."""
        if self.finished_at is not None or now >= self.settings.ends_at:
            raise TournamentError(Code.TOURNAMENT_OVER, "this arena is over")
        e = self.entrants.get(player)
        if e is not None and e.closed:
            raise TournamentError(Code.CLOSED, "your account was closed for fair play")
        if e is not None and not e.paused:
            return TOutcome()  # in already: nothing changes
        data = {"player": player, "name": name, "account": account, "net": net,
                "rating": rating, "provisional": provisional}
        out = TOutcome(log=[self._log(now, "join", data)])
        self._apply_join(data, now)
        out.events.append(self._event("arena"))
        return out

    def _apply_join(self, data: Message, now: int) -> None:
        self._changes += 1
        e = self.entrants.get(data["player"])
        if e is None:
            e = self.entrants[data["player"]] = ArenaEntrant(
                data["player"], data["name"], len(self.entrants), bool(data.get("account")),
                str(data.get("net") or ""), data.get("rating"),
                bool(data.get("provisional", True)), reached_at=now)
        e.paused = False
        if e.racing is None:
            e.waiting_since = now

    def pause(self, player: str, now: int) -> TOutcome:
        """The entrant is not paired again until he joins again (his points are kept); a race
        he is in goes on. TournamentError ``forbidden`` for someone who is not in."""
        e = self.entrants.get(player)
        if e is None:
            raise TournamentError(Code.FORBIDDEN, "you are not in this arena")
        if e.paused or self.finished_at is not None:
            return TOutcome()
        self._apply_pause(player)
        return TOutcome(log=[self._log(now, "pause", {"player": player})],
                        events=[self._event("arena")])

    def close_account(self, player: str, now: int) -> TOutcome:
        """His account was closed for fair play: paused for good, no place in the table (see
        the module docstring); a race he is in goes on. Nothing if he is not in, or closed
        already."""
        e = self.entrants.get(player)
        if e is None or e.closed:
            return TOutcome()
        out = TOutcome(log=[self._log(now, "closed", {"player": player})])
        self._apply_closed(player)
        out.events.append(self._event())
        return out

    def _apply_closed(self, player: str) -> None:
        self._changes += 1
        e = self.entrants[player]
        e.closed = e.paused = True
        e.waiting_since = None

    def _apply_pause(self, player: str) -> None:
        self._changes += 1
        e = self.entrants[player]
        e.paused = True
        e.waiting_since = None

    # ------------------------------------------------------------------ pairing
    def tick(self, now: int, pair: bool = True) -> TOutcome:
        """Pair the entrants who wait (while it runs; not with ``pair`` false), and end the
        arena once its time is up and no race of it is under way."""
        out = TOutcome()
        s = self.settings
        if self.finished_at is not None:
            return out
        if pair and s.starts_at <= now < s.ends_at:
            for a, b in self._pairs():
                race = f"{self.tid}-{self.pairs + 1}"
                entry = {"race": race, "players": [a, b]}
                out.log.append(self._log(now, "pair", entry))
                self._apply_pair(entry)
                # The seed is the service's to draw (a fresh secret deal for each race).
                out.plans.append(RacePlan(race, s.game, 0, [a, b], True, 0))
            if out.plans:
                out.events.append(self._event("arena"))
        if now >= s.ends_at and not self.running:
            out.log.append(self._log(now, "finish"))
            self.finished_at = now
            out.events.append(self._event("arena_over"))
            out.finished = True
        return out

    def _pairs(self) -> list[tuple[str, str]]:
        """Who races whom now (see the module docstring)."""
        waiting = [e.player for e in self.waiting()]
        pairs = []
        while len(waiting) >= 2:
            first = waiting.pop(0)
            last = self.entrants[first].last_opponent
            # The nearest in the table; his last opponent only when nobody else waits.
            pick = next((i for i, p in enumerate(waiting) if p != last), 0)
            pairs.append((first, waiting.pop(pick)))
        return pairs

    def _apply_pair(self, entry: Message) -> None:
        self._changes += 1
        a, b = entry["players"]
        self.running[entry["race"]] = (a, b)
        for me, other in ((a, b), (b, a)):
            e = self.entrants[me]
            e.racing = entry["race"]
            e.waiting_since = None
            e.last_opponent = other
        number = int(entry["race"].rsplit("-", 1)[1])
        self.pairs = max(self.pairs, number)

    # ------------------------------------------------------------------ results
    def race_over(self, race: str, results: list[ArenaResult], now: int) -> TOutcome:
        """A race of this arena ended: its racers score (once per race), and wait again."""
        if race in self.results or race not in self.running:
            return TOutcome()
        entry = {"race": race, "results": [asdict(r) for r in results]}
        out = TOutcome(log=[self._log(now, "result", entry)])
        self._apply_result(entry, now)
        out.events.append(self._event())
        # The last race after the end ends the arena; the racers are paired again at the next
        # tick (within PAIR_EVERY_MS), with whoever else is free by then.
        out.extend(self.tick(now, pair=False))
        return out

    def _apply_result(self, entry: Message, now: int) -> None:
        self._changes += 1
        race = entry["race"]
        self.results.add(race)
        players = self.running.pop(race, ())
        for data in entry["results"]:
            r = ArenaResult(**data)
            e = self.entrants.get(r.player)
            if e is None:
                continue
            e.races += 1
            e.racing = None
            if r.flagged:
                e.flagged = True
                e.streak = 0
                e.form.append("F")
            elif r.moved and r.place == 1 and not r.shared:
                e.wins += 1
                e.streak += 1
                self._score(e, STREAK_WIN if e.streak > STREAK_FROM else WIN, now)
                e.form.append("W")
            elif r.moved and r.place == 1:
                e.streak = 0
                self._score(e, SHARED, now)
                e.form.append("D")
            else:
                e.streak = 0
                e.form.append("L")
            if not r.moved:  # gone, or never there: paused until he comes back
                e.paused = True
            if not e.paused:
                e.waiting_since = now
        for player in players:  # a racer the result did not name waits again too
            e = self.entrants[player]
            if e.racing == race:
                e.racing = None
                if not e.paused:
                    e.waiting_since = now

    @staticmethod
    def _score(e: ArenaEntrant, points: int, now: int) -> None:
        e.points += points
        e.reached_at = now

    # ------------------------------------------------------------------ the table
    def _sorted(self) -> tuple[list[ArenaEntrant], dict[str, int]]:
        """The entrants in table order (see :meth:`standings`) and each one's index in it,
        sorted once per change."""
        if self._ordered is None or self._ordered[0] != self._changes:
            order = sorted(self.entrants.values(),
                           key=lambda e: (e.off, -e.points, -e.wins, e.reached_at, e.order))
            self._ordered = (self._changes, order, {e.player: i for i, e in enumerate(order)})
        return self._ordered[1], self._ordered[2]

    def _order(self) -> list[ArenaEntrant]:
        return self._sorted()[0]

    def standings(self, rows: int | None = None) -> list[Message]:
        """The table (its first ``rows`` rows; None: all): points (desc), then wins (desc),
        then who reached his points first; a flagged or closed entrant listed last, with no place.
        Built once per change and shared by every message until the next — only as far as
        asked (the messages carry the first rows: building a thousand rows for them cost
        more than the rest of the table's message): neither the list nor its rows may be
        changed."""
        want = len(self.entrants) if rows is None else min(rows, len(self.entrants))
        built = self._table
        if built is None or built[0] != self._changes or len(built[1]) < want:
            order = self._order()
            self._table = built = (self._changes, [
                {"place": None if e.off else i + 1, **e.row()}
                for i, e in enumerate(order[:want])])
        return built[1] if len(built[1]) == want else built[1][:want]

    def row(self, player: str) -> Message | None:
        """``player``'s row of :meth:`standings` (None if he is not in), without building the
        others (each racer is told his own after every race of his)."""
        e = self.entrants.get(player)
        if e is None:
            return None
        i = self._sorted()[1][player]
        return {"place": None if e.off else i + 1, **e.row()}

    # ------------------------------------------------------------------- replay
    def replay(self, entry: TLogEntry) -> None:
        """Re-apply one durable log entry when loading the arena."""
        data = entry.data
        if entry.kind == "join":
            self._apply_join(data, entry.at)
        elif entry.kind == "pause":
            self._apply_pause(data["player"])
        elif entry.kind == "closed":
            self._apply_closed(data["player"])
        elif entry.kind == "pair":
            self._apply_pair(data)
        elif entry.kind == "result":
            self._apply_result(data, entry.at)
        elif entry.kind == "finish":
            self.finished_at = entry.at
        else:
            raise ValueError(f"unknown arena log entry {entry.kind!r}")
        self.v += 1
