"""Replays: every board a racer saw, after each of his actions, as the ``GET
/api/races/{race}/replay/{player}`` body.

A replay of a long race is a lot of work for Python (a 10,000-action race is 10,001 boards,
megabytes of JSON before gzip): built in a thread it would hold the interpreter's lock for
seconds and every other client's ping would wait. So it is built from plain data — the game,
the seed and the actions — by :func:`encoded`, which :func:`job` hands to the builder's process
(:class:`solrace.runtime.builder.Builder`: spawned, niced, the same replay asked for twice at
once built once). A race the server does not hold is read straight from the SQLite file in that
process (:mod:`solrace.store.sqlite_replays`). Pure: no I/O.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

import solrules

from solrace.core.race import Race

#: A job for the builder's process: the key that makes it once, the function, its arguments.
Job = tuple[tuple[str, str, bool], Callable[..., Any], tuple[Any, ...]]


def build(game_name: str, seed: int, meta: dict[str, Any], actions: list[str],
          times: list[int]) -> dict[str, Any]:
    game = solrules.new_game(game_name, seed)
    deal = game.position()  # every card, face-down ones too: replays come after the reveal
    boards = [game.board()]
    for action in actions:
        if action == "undo":
            game.pop()
        else:
            game.push(solrules.Move.from_text(action))
        boards.append(game.board())
    return {**meta, "deal": deal, "moves": actions, "times": times, "boards": boards}


def encoded(game_name: str, seed: int, meta: dict[str, Any], actions: list[str],
            times: list[int], gzip_ok: bool) -> bytes:
    """:func:`build`, as the response body (run in the builder's process)."""
    data = json.dumps(build(game_name, seed, meta, actions, times),
                      separators=(",", ":")).encode()
    return gzip.compress(data, 5) if gzip_ok else data


def plain(race: Race, player: str) -> tuple[str, int, dict[str, Any], list[str], list[int]]:
    """What :func:`build` needs of a racer's race, as plain data (sent to another process)."""
    racer = race.racers[player]
    meta = {"race": race.race, "player": player, "name": racer.name, "bot": racer.bot}
    times = [t - (race.started_at or 0) for t in racer.times]
    return race.game, race.seed, meta, list(racer.actions), times


def job(race: Race, player: str, gzip_ok: bool) -> Job:
    """The body of a replay of a race held in memory, as a job for the builder's process."""
    return (race.race, player, gzip_ok), encoded, (*plain(race, player), gzip_ok)
