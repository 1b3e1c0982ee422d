"""The home page's live race: which running races may be featured, and which one is.

Pure: races in, a choice out. The service (:mod:`solrace.service.showcase`) looks at the races
a process holds every couple of seconds and asks :func:`best`; with several processes, each
offers its best with its :func:`rank` and the best rank of all is featured.

A race may be featured (:func:`featurable`) when anyone could find it and watch it anyway:

- it is running, has two racers or more, and somebody still races in it;
- its deal is not held: the daily deal stays secret until the day is over, nobody may watch it
  (the ``watch`` command refuses it), so it is never featured;
- it is public: a race listed in the lobby (``public``), a quick race, a race against a house
  bot, an arena's race, or a round of a tournament that takes no entry code. A race created
  for friends and shared by its link is not shown to strangers, though its link lets anyone
  watch it.

Which one (:func:`rank`, highest first): races between people before races against bots, then
the highest mean of the racers' shown ratings (a house bot counts with its level's rating, a
racer without a rating — anonymous, or a bot of one's own — as a new player's 1500), then the
race with more racers, then the one that started last (more of it is left to watch), then the
race id (every process picks the same race from the same offers). The mean rather than the sum
or the best: a race of eight newcomers is not a race of strong players, and one strong player
against a newcomer is not a close race.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from solrace.core.identity import NEW_RATING
from solrace.core.levels import LEVELS
from solrace.core.race import Race
from solrace.core.racer import Racer

Message = dict[str, Any]

#: How races are made (``Options.kind``) that are public by nature: paired by the server, or
#: entered by anyone in an arena.
PUBLIC_KINDS = frozenset({"quick", "bot", "arena"})

#: A race's place among the candidates, compared as a list (so that it survives JSON between
#: processes): [people ≥ 2 (0 or 1), mean rating (tenths), racers, started_at, race id].
Rank = list[Any]


def featurable(race: Race, public_tournament: Callable[[str], bool]) -> bool:
    """May ``race`` be featured? (The module docstring.) ``public_tournament(tid)``: does
    that tournament take entrants without a code?"""
    if race.status != "running" or len(race.racers) < 2:
        return False
    if race.deal.held_until is not None:
        return False
    if not any(not r.done for r in race.racers.values()):
        return False
    options = race.options
    if options.public or options.kind in PUBLIC_KINDS:
        return True
    t = race.tournament
    return t is not None and public_tournament(str(t.get("tournament", "")))


def shown_rating(racer: Racer) -> int:
    """The rating a racer counts with here: his shown rating, a house bot's level's, or a new
    player's."""
    if racer.rating is not None:
        return racer.rating
    if racer.level is not None and racer.level in LEVELS:
        return LEVELS[racer.level].rating
    return NEW_RATING


def rank(race: Race) -> Rank:
    """The race's place among the candidates (higher first; the module docstring)."""
    racers = list(race.racers.values())
    people = sum(1 for r in racers if not r.bot)
    mean = sum(shown_rating(r) for r in racers) / len(racers) if racers else 0.0
    return [int(people >= 2), round(mean * 10), len(racers), race.started_at or 0, race.race]


def best(races: Iterable[Race], public_tournament: Callable[[str], bool]) -> Race | None:
    """The race to feature among ``races``, or None if none may be."""
    chosen: Race | None = None
    chosen_rank: Rank | None = None
    for race in races:
        if not featurable(race, public_tournament):
            continue
        r = rank(race)
        if chosen_rank is None or r > chosen_rank:
            chosen, chosen_rank = race, r
    return chosen


def running(races: Iterable[Race]) -> int:
    """How many of ``races`` are running (the daily deal's and the bots' too: a race is a
    race)."""
    return sum(1 for race in races if race.status == "running")


def featured_view(race: Race) -> Message:
    """The featured race as the home page shows it: enough to draw its racers and to watch
    it (the boards come over the socket, by ``watch``, masked as any spectator's)."""
    return {
        "race": race.race,
        "game": race.game,
        "kind": race.options.kind,
        "rated": race.options.rated,
        "time_limit": race.options.time_limit,
        "started_at": race.started_at,
        "ends_at": race.ends_at,
        "tournament": race.tournament,
        "racers": [{"player": r.player, "name": r.name, "bot": r.bot, **r.identity(),
                    "progress": r.progress(), "finished": r.finished_at is not None,
                    "resigned": r.resigned}
                   for r in race.racers.values()],
    }
