"""What a finished race means for its players: a result row each, and, in a rated race, who
counts for the ratings and in which order. Pure: the store writes it (exactly once per race,
see :mod:`solrace.service.scoring`), :mod:`solrace.core.rating` does the arithmetic.

Who counts in a rated race: racers who are players (``pid``) and took their seat (a paired
racer who never came is not rated), and the house's bots (their level's fixed rating). Bots a
client declared and anonymous racers are ranked in the race, but not rated: their strength is
unknown, and a rating against them would mean nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solrace.core.levels import LEVELS
from solrace.core.race import Race, Racer
from solrace.core.rating import Rating, rate


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
    rated: bool = False
    before: int | None = None  # shown ratings, when rated
    after: int | None = None
    deviation: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__}
        out["delta"] = (None if self.after is None or self.before is None
                        else self.after - self.before)
        return out


@dataclass
class Scoring:
    """A finished race's results, and its rating inputs: ``counted`` racers (player ids or
    ``"bot:N"`` for a house bot of level N), in race order with their places."""

    race: str
    game: str
    rated: bool
    results: list[Result] = field(default_factory=list)
    counted: list[tuple[str, Racer]] = field(default_factory=list)
    places: dict[str, int] = field(default_factory=dict)


def took_seat(race: Race, racer: Racer) -> bool:
    """Did the racer race? In a race whose racers were seated (paired, a tournament's) only if
    he came (said ready); otherwise he joined himself, so yes."""
    return race.seated_until is None or racer.ready


def scoring(race: Race) -> Scoring:
    """The results and rating inputs of a finished race (see the module docstring)."""
    assert race.status == "finished" and race.finished_at is not None
    places = race.places()
    n = len(race.racers)
    out = Scoring(race.race, race.game, False)
    for racer in race.racers.values():
        if racer.pid is None:
            continue
        foundation, total = racer.game.progress()
        out.results.append(Result(
            racer.pid, race.race, race.game, race.finished_at, places[racer.player], n,
            race.time_ms(racer), foundation, total, racer.finished_at is not None,
            racer.name, race.options.kind, race.options.day))
    if rated(race):
        for racer in race.racers.values():
            if not took_seat(race, racer):
                continue
            if racer.pid is not None and not racer.bot:
                out.counted.append((racer.pid, racer))
            elif racer.bot and racer.level in LEVELS:
                out.counted.append((f"bot:{racer.level}", racer))
        out.rated = sum(1 for key, _ in out.counted if not key.startswith("bot:")) >= 1 \
            and len(out.counted) >= 2
        out.places = {racer.player: places[racer.player] for _, racer in out.counted}
    return out


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


def stats(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A player's statistics per game from his results (``Result.as_dict`` rows): races,
    wins (first place in a race of two or more), deals cleared, best and median time of those,
    cards home on average."""
    by_game: dict[str, list[dict[str, Any]]] = {}
    for r in results:
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
            "wins": sum(1 for r in rows if r["place"] == 1 and r["racers"] >= 2),
            "finished": n,
            "best_ms": times[0] if times else None,
            "median_ms": median,
            "cards_avg": round(sum(int(r["foundation"]) for r in rows) / len(rows), 1),
        }
    return out
