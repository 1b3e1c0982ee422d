"""The daily deal's calendar: which UTC day a time falls on, when a day's deal may be revealed,
a player's streak, and the day's table. Pure: the time is always given.

A day's deal is played from 00:00 to 24:00 UTC; an attempt started at 23:59 runs for its time
limit, so the deal stays secret until the day's end plus the time limit (and the countdown).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Container, Iterable, Mapping
from typing import Any

DAY_MS = 86_400_000


def day_of(ms: int) -> str:
    """The UTC day of a unix time in ms, as ``YYYY-MM-DD``."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")


def day_start(day: str) -> int:
    """Unix ms of the day's 00:00 UTC (ValueError for anything but ``YYYY-MM-DD``)."""
    d = dt.datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=dt.UTC)
    return int(d.timestamp() * 1000)


def previous(day: str) -> str:
    return day_of(day_start(day) - DAY_MS)


def reveal_at(day: str, time_limit_s: int, countdown_ms: int) -> int:
    """When every attempt at the day's deal has ended: the deal may be shown from then."""
    return day_start(day) + DAY_MS + time_limit_s * 1000 + countdown_ms


def streak(days: Iterable[str], today: str) -> int:
    """Days in a row on which the player played the deal to its end, up to today (a streak
    still alive today counts up to yesterday until he plays today's)."""
    played = set(days)
    day = today if today in played else previous(today)
    n = 0
    while day in played:
        n += 1
        day = previous(day)
    return n


def _key(r: Mapping[str, Any]) -> tuple[int, int]:
    if r["finished"]:
        return (0, int(r["time_ms"] or 0))
    return (1, -int(r["foundation"]))


def ranked(r: Mapping[str, Any], closed: Container[str] = ()) -> bool:
    """Does an attempt's result take a place in the day's table? Only an account's (a guest
    plays the deal too, unranked), not aborted (fewer than three moves), not flagged by the
    fair-play rules unless a moderator cleared it, not of an account closed for fair play."""
    pid = r.get("id") or r.get("player")
    return bool(r.get("account")) and not r.get("aborted") and pid not in closed \
        and not (r.get("flagged") and not r.get("cleared"))


def table(results: Iterable[Mapping[str, Any]], closed: Container[str] = ()
          ) -> list[dict[str, Any]]:
    """The day's table from the attempts' results (``name``, ``id``, ``time_ms``,
    ``foundation``, ``total``, ``finished``, ``at``, ``race``, ``account``, ``aborted``,
    ``flagged``, ``cleared``): the ranked ones (:func:`ranked`) — those who cleared the deal by
    time, then everyone else by cards home, then earlier first; equal results share a place —
    then the flagged ones waiting for a moderator, with ``flagged: true`` and no place. A row's
    ``id`` is the player's (``player`` in a stored result)."""
    rows = [r for r in results if ranked(r, closed)]
    rows.sort(key=lambda r: (_key(r), r.get("at") or 0))
    out = []
    for r in rows:
        place = 1 + sum(1 for other in rows if _key(other) < _key(r))
        out.append(_row(r, place))
    waiting = [r for r in results if r.get("account") and not r.get("aborted")
               and r.get("flagged") and not r.get("cleared")
               and (r.get("id") or r.get("player")) not in closed]
    for r in sorted(waiting, key=lambda r: (_key(r), r.get("at") or 0)):
        out.append({**_row(r, None), "flagged": True})
    return out


def _row(r: Mapping[str, Any], place: int | None) -> dict[str, Any]:
    return {"place": place, "id": r.get("id") or r.get("player"),
            **{k: r.get(k) for k in ("name", "time_ms", "foundation", "total", "finished",
                                     "race")}}


def would_place(result: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> int:
    """Where an unranked result (a guest's) would stand among the table's ranked rows."""
    mine = _key(result)
    return 1 + sum(1 for r in rows if r.get("place") is not None and _key(r) < mine)
