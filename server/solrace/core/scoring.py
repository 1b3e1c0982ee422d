"""What a finished race means for its players: a result row each, and, in a rated race, who
counts for the ratings and in which order. Pure: the store writes it (exactly once per race,
see :mod:`solrace.service.scoring`), :mod:`solrace.core.rating` does the arithmetic.

The rules of rated play (docs/protocol.md, "Rated play"), in the order they apply:

1. A race may be rated at all only if it was made rated (a quick race, a bot race, a custom
   race with ``rated``), with no chosen seed, no hints, and not the daily deal.
2. A racer counts if he took his seat (a paired racer who never came is not rated), is an
   **account** (a player with a password: a guest's result is casual, ``guest``) and did not
   **abort** (fewer than three moves: ``aborted``); a house bot counts with its level's fixed
   rating. Bots a client declared and anonymous racers never count: their strength is unknown.
3. A custom race is rated only when every racer is an account (``not_all_accounts``), each
   from a network of his own (the next rule).
4. Two counted racers from the same network make the race casual (``same_network``), and so do
   two who already had :data:`REPEAT_PAIR_RATED` rated races together within the last day
   (``repeat_pair``): the same person behind two accounts, or friends trading wins.
5. With fewer than two racers counted, or no person among them, nothing is rated (``too_few``:
   an opponent who aborted gives nobody rating points, so aborting is no way to hand them out).
6. A rated race in which a counted racer's result is **flagged** by the fair-play rules
   (:mod:`solrace.core.fairplay`) is *held*: no rating changes until a moderator clears it
   (then they are worked out from the ratings as they are then), and none at all if the account
   is closed for fair play.

Before all of these: a racer whose account is **closed** for fair play (the store's answer when
the race is scored comes in as ``closed``) makes the whole race casual (``closed``), whatever
its kind: his results after the closure change nobody's rating, his own or an opponent's (he
cannot seek rated any more, but a race he was seated in before, or a custom race, still ends).

A walkout counts towards a pause of his rated pairing
(:func:`solrace.core.fairplay.pause_until`): an account that, in a race meant to be rated,
aborted it by his own doing (:func:`walked_out`) or resigned within
:data:`~solrace.settings.EARLY_RESIGN_MS` of its start (:func:`early_resign`: a loss all the
same).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from solrace.core.fairplay import Signals
from solrace.core.levels import LEVELS
from solrace.core.race import Race
from solrace.core.racer import Racer
from solrace.core.rating import Rating, rate
from solrace.settings import EARLY_RESIGN_MS, REPEAT_PAIR_RATED


@dataclass(frozen=True, slots=True)
class Result:
    """One player's result in one race (a row of his history)."""

    player: str
    race: str
    game: str
    at: int  # when the race ended
    place: int
    racers: int
    time_ms: int | None
    foundation: int
    total: int
    finished: bool
    name: str
    kind: str | None = None
    day: str | None = None
    #: Someone else took the same place (a shared first place is no win).
    shared: bool = False
    rated: bool = False
    before: int | None = None  # shown ratings, when rated
    after: int | None = None
    deviation: int | None = None
    resigned: bool = False
    #: Fewer than three moves: unrated, out of his statistics and streaks.
    aborted: bool = False
    #: An account who aborted a race meant to be rated, or resigned it early (a pause comes
    #: after a few).
    walkout: bool = False
    account: bool = False
    net: str = ""  # the tag of his network (never shown)
    hints: int = 0
    racer: str = ""  # his racer id in the race ("p1"), for his replay
    #: Why a race meant to be rated did not count for him (the reasons above), else None.
    casual: str | None = None
    #: The fair-play rules flagged it: off ratings and tables until a moderator clears it.
    flagged: bool = False
    #: Rated, but the ratings wait for a moderator (this result or another of the race is
    #: flagged).
    held: bool = False
    signals: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__}
        out["delta"] = (None if self.after is None or self.before is None
                        else self.after - self.before)
        return out


@dataclass
class Scoring:
    """A finished race's results, and its rating inputs: ``counted`` racers (player ids or
    ``"bot:N"`` for a house bot of level N), in race order with their places. ``casual``: why
    a race meant to be rated is not; ``held``: rated, but held for a moderator."""

    race: str
    game: str
    rated: bool
    results: list[Result] = field(default_factory=list)
    counted: list[tuple[str, Racer]] = field(default_factory=list)
    places: dict[str, int] = field(default_factory=dict)
    casual: str | None = None
    held: bool = False

    def pairs(self) -> list[tuple[str, str]]:
        """The counted players two by two (ids in order), for their history of rated races
        together."""
        pids = sorted(k for k, _ in self.counted if not k.startswith("bot:"))
        return list(combinations(pids, 2))

    def body(self, changes: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``ratings`` message's body."""
        out: dict[str, Any] = {"rated": self.rated and not self.held, "game": self.game,
                               "changes": changes}
        if self.casual is not None:
            out["casual"] = self.casual
        if self.held:
            out["held"] = True
        return out


def took_seat(race: Race, racer: Racer) -> bool:
    """Did the racer race? In a race whose racers were seated (paired, a tournament's) only if
    he came (said ready); otherwise he joined himself, so yes."""
    return race.seated_until is None or racer.ready


def scoring(race: Race, signals: Mapping[str, Signals] | None = None,
            together: Callable[[str, str], int] | None = None,
            closed: Collection[str] = ()) -> Scoring:
    """The results and rating inputs of a finished race (see the module docstring).
    ``signals``: the fair-play signals of its racers (by racer, e.g. ``"p1"``);
    ``together(a, b)``: how many rated races players ``a`` and ``b`` had together lately;
    ``closed``: the ids of its players whose accounts are closed for fair play."""
    assert race.status == "finished" and race.finished_at is not None
    signals = signals or {}
    places = race.places()
    n = len(race.racers)
    counts: dict[int, int] = {}
    for place in places.values():
        counts[place] = counts.get(place, 0) + 1
    meant = rated(race)
    out = Scoring(race.race, race.game, False)
    mine: dict[str, str | None] = {}  # each player's own reason not to count
    for racer in race.racers.values():
        if racer.pid is None or racer.bot:
            continue
        reason = None
        if meant:
            if racer.pid in closed:
                reason = "closed"
            elif not racer.account:
                reason = "guest"
            elif racer.aborted or not took_seat(race, racer):
                reason = "aborted"
        mine[racer.player] = reason
    casual = None
    if meant:
        if "closed" in mine.values():
            casual = "closed"
        if casual is None and race.options.kind is None and not _all_accounts(race):
            casual = "not_all_accounts"
        humans = [r for r in race.racers.values() if r.player in mine and mine[r.player] is None]
        nets = [r.net for r in humans if r.net]
        if casual is None and len(nets) != len(set(nets)):
            casual = "same_network"
        if casual is None and together is not None and any(
                together(*sorted((a.pid or "", b.pid or ""))) >= REPEAT_PAIR_RATED
                for a, b in combinations(humans, 2)):
            casual = "repeat_pair"
        bots = [r for r in race.racers.values()
                if r.bot and r.level in LEVELS and took_seat(race, r)]
        if casual is None and (not humans or len(humans) + len(bots) < 2):
            casual = "too_few"
        if casual is None:
            out.counted = [(r.pid or "", r) for r in humans] + \
                [(f"bot:{r.level}", r) for r in bots]
            out.counted.sort(key=lambda kr: list(race.racers).index(kr[1].player))
            out.rated = True
            out.places = {racer.player: places[racer.player] for _, racer in out.counted}
            out.held = any(signals[r.player].flagged for r in humans if r.player in signals)
        out.casual = casual
    for racer in race.racers.values():
        if racer.player not in mine:
            continue
        assert racer.pid is not None
        foundation, total = racer.game.progress()
        sig = signals.get(racer.player)
        counted = out.rated and mine[racer.player] is None
        out.results.append(Result(
            racer.pid, race.race, race.game, race.finished_at, places[racer.player], n,
            race.time_ms(racer), foundation, total, racer.finished_at is not None,
            racer.name, race.options.kind, race.options.day,
            counts[places[racer.player]] > 1,
            resigned=racer.resigned, aborted=racer.aborted or not took_seat(race, racer),
            walkout=meant and racer.account and mine[racer.player] != "closed" and (
                (mine[racer.player] == "aborted" and walked_out(race, racer))
                or early_resign(race, racer)),
            account=racer.account, net=racer.net, hints=racer.hints, racer=racer.player,
            casual=None if counted or not meant else (mine[racer.player] or casual),
            flagged=sig is not None and sig.flagged, held=counted and out.held,
            signals=None if sig is None else sig.as_dict()))
    return out


def walked_out(race: Race, racer: Racer) -> bool:
    """Is an aborted racer to blame for it? He resigned, never sat, or let the race end
    without him (out of time, left, claimed by the others, idle when the last one racing);
    not when the race ended before he could play (an opponent resigned at once, say)."""
    return racer.resigned or not took_seat(race, racer) \
        or race.reason in ("time", "abandoned", "claimed", "idle")


def early_resign(race: Race, racer: Racer) -> bool:
    """Did he resign within :data:`~solrace.settings.EARLY_RESIGN_MS` of the race's start
    (whatever his moves)? One who looked at the deal and left, like an abort."""
    return racer.resigned and racer.resigned_at is not None and race.started_at is not None \
        and racer.resigned_at - race.started_at < EARLY_RESIGN_MS


def _all_accounts(race: Race) -> bool:
    """Is every racer of a custom race an account (from a known network: the networks are
    told apart by the rule after this one)?"""
    return all(r.account and not r.bot and r.net for r in race.racers.values())


def rated(race: Race) -> bool:
    """May the race change ratings at all? (``rated`` set, no chosen seed, no hints, not the
    daily deal.)"""
    o = race.options
    return o.rated and not race.seed_chosen and not o.hints and o.kind != "daily"


def new_ratings(s: Scoring, current: dict[str, Rating]) -> dict[str, Rating]:
    """Everyone counted's rating after the race, from ``current`` (player id -> rating; a
    player with none starts at the default). House bots keep theirs."""
    keys = [key for key, _ in s.counted]
    before = [LEVELS[int(k[4:])].as_rating if k.startswith("bot:") else current.get(k, Rating())
              for k in keys]
    after = rate(before, [s.places[r.player] for _, r in s.counted],
                 fixed=[k.startswith("bot:") for k in keys])
    return dict(zip(keys, after, strict=True))


def changes(s: Scoring, current: dict[str, Rating], new: dict[str, Rating]) -> list[dict[str, Any]]:
    """The ``ratings`` message's ``changes``: each counted racer's shown rating before and
    after."""
    out = []
    for key, racer in s.counted:
        bot = key.startswith("bot:")
        old = LEVELS[int(key[4:])].as_rating if bot else current.get(key, Rating())
        nxt = new[key]
        entry: dict[str, Any] = {"player": racer.player, "before": old.shown,
                                 "after": nxt.shown, "delta": nxt.shown - old.shown,
                                 "deviation": round(nxt.sigma),
                                 "provisional": False if bot else nxt.provisional}
        if bot:
            entry["bot"] = True
            entry["level"] = racer.level
        else:
            entry["id"] = key
        out.append(entry)
    return out


def with_ratings(s: Scoring, current: dict[str, Rating], new: dict[str, Rating]) -> list[Result]:
    """The results, each player's with his rating before and after."""
    out = []
    for r in s.results:
        if r.player in new:
            old = current.get(r.player, Rating())
            out.append(Result(**{**{k: getattr(r, k) for k in r.__slots__},
                                 "rated": True, "before": old.shown,
                                 "after": new[r.player].shown,
                                 "deviation": round(new[r.player].sigma)}))
        else:
            out.append(r)
    return out


def held_entries(s: Scoring) -> list[list[Any]]:
    """A held race's rating inputs, kept until a moderator clears it: ``[key, place, racer,
    level]`` for every counted racer."""
    return [[key, s.places[r.player], r.player, r.level] for key, r in s.counted]


def rate_held(entries: list[list[Any]], current: dict[str, Rating]
              ) -> tuple[dict[str, Rating], list[dict[str, Any]]]:
    """The ratings after a held race (:func:`held_entries`), from the ratings as they are now
    (``current``: player id -> rating), and the ``ratings`` message's ``changes``."""
    keys = [str(e[0]) for e in entries]
    bot = [k.startswith("bot:") for k in keys]
    before = [LEVELS[int(k[4:])].as_rating if b else current.get(k, Rating())
              for k, b in zip(keys, bot, strict=True)]
    after = rate(before, [int(e[1]) for e in entries], fixed=bot)
    out = []
    for (key, _, player, level), b, old, nxt in zip(entries, bot, before, after, strict=True):
        entry: dict[str, Any] = {"player": player, "before": old.shown, "after": nxt.shown,
                                 "delta": nxt.shown - old.shown, "deviation": round(nxt.sigma),
                                 "provisional": False if b else nxt.provisional}
        if b:
            entry["bot"] = True
            entry["level"] = level
        else:
            entry["id"] = key
        out.append(entry)
    return dict(zip(keys, after, strict=True)), out


def stats(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A player's statistics per game from his results (``Result.as_dict`` rows): races,
    wins (first place, not shared, in a race of two or more), deals cleared, best and median
    time of those, cards home on average. Aborted results, and flagged ones a moderator has
    not cleared, are left out."""
    by_game: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r.get("aborted") or (r.get("flagged") and not r.get("cleared")):
            continue  # he did not commit to that race; a flagged result waits for a person
        by_game.setdefault(r["game"], []).append(r)
    out = {}
    for game, rows in by_game.items():
        times = sorted(int(r["time_ms"]) for r in rows if r.get("finished") and r.get("time_ms"))
        n = len(times)
        median = None
        if n:
            median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) // 2
        out[game] = {
            "races": len(rows),
            "wins": sum(1 for r in rows if r["place"] == 1 and r["racers"] >= 2
                        and not r.get("shared")),
            "finished": n,
            "best_ms": times[0] if times else None,
            "median_ms": median,
            "cards_avg": round(sum(int(r["foundation"]) for r in rows) / len(rows), 1),
        }
    return out
