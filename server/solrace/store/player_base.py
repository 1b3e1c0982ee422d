"""The durable record of players: who they are (names, hashed keys, passwords), their results
and ratings, and the daily deals.

Unlike a race's log, nothing here is on the move path: each call is one short transaction (a
SQLite transaction in a thread, one Redis script) that the caller awaits, and it is durable
when it returns. Two calls are where "exactly once" lives:

- :meth:`PlayerStore.score` writes a finished race's results and rating changes only if the
  race is not scored yet, in the same transaction that marks it scored (Redis: the same
  script, which also checks that no rating it read has changed since, else the scorer reads
  again);
- :meth:`PlayerStore.put_daily` and :meth:`PlayerStore.daily_attempt` keep the first value
  written (a day's deal, a player's attempt) and return it, whoever wrote it.

Implementations: :class:`solrace.store.sqlite_players.SQLitePlayers` (the same file as the
races) and :class:`solrace.store.redis_players.RedisPlayers`.
"""

from __future__ import annotations

from typing import Any, Protocol

from solrace.core.identity import Player
from solrace.core.rating import Rating
from solrace.core.scoring import Scoring

#: How many of a player's latest results his page's statistics are worked out from.
STATS_RESULTS = 2000


class PlayerStore(Protocol):
    async def by_key(self, key_hash: str) -> Player | None:
        """The player one of whose browser keys hashes to ``key_hash``."""

    async def by_name(self, name: str) -> Player | None:
        """The player whose name is ``name`` (by skeleton: see ``identity.name_key``)."""

    async def by_id(self, pid: str) -> Player | None: ...

    async def create(self, player: Player, key_hash: str) -> bool:
        """Store a new player and his first key; False (nothing stored) if the name is taken
        (another player's name has the same skeleton)."""

    async def rename(self, pid: str, name: str) -> bool:
        """False (nothing changed) if another player has that name (by skeleton)."""

    async def set_password(self, pid: str, record: str) -> None: ...

    async def add_key(self, pid: str, key_hash: str, now: int) -> None:
        """Another browser of this player (after a sign-in)."""

    async def drop_key(self, key_hash: str) -> None:
        """Forget a browser's key (sign-out)."""

    async def put_ticket(self, ticket_hash: str, pid: str, expires_at: int) -> None: ...

    async def take_ticket(self, ticket_hash: str, now: int) -> str | None:
        """The player of an unused ticket that has not expired, used up now; else None."""

    async def failures(self, keys: list[str], now: int) -> list[tuple[int, int]]:
        """Failed sign-ins under each key (a name, a network, or both: see
        solrace.service.accounts): how many, and the time of the last one (ms); (0, 0) for a
        key with none. A key's failures are forgotten ``SIGN_IN_FORGET_S`` after its last."""

    async def add_failure(self, keys: list[str], now: int) -> None:
        """One more failed sign-in under each key, now."""

    async def clear_failures(self, keys: list[str]) -> None: ...

    async def known_network(self, pid: str, tag: str, now: int) -> bool:
        """Did the player sign in (or set his password) from this network (its tag:
        ``core.keys.net_tag``) within ``KNOWN_NETWORK_DAYS``?"""

    async def add_network(self, pid: str, tag: str, now: int) -> None:
        """Remember that network for the player (his ``KNOWN_NETWORKS`` latest ones)."""

    async def take_account(self, tag: str, day: str, cap: int) -> bool:
        """Count one more account made from this network on this UTC day (``YYYY-MM-DD``),
        unless ``cap`` are counted already: then False, and nothing counted. Shared by every
        process of the store."""

    async def ratings(self, pid: str) -> dict[str, Rating]:
        """The player's rating per game he has played rated races of."""

    async def score(self, s: Scoring) -> dict[str, Any] | None:
        """Write a finished race's results (and new ratings, if rated and not held) once; a
        held race's rating inputs are kept for :meth:`ModerationStore.clear`. The ``ratings``
        message's body (``rated``, ``game``, ``changes``, ``casual``?, ``held``?); None if it
        was scored already."""

    async def together(self, a: str, b: str, since: int) -> int:
        """Rated races players ``a`` and ``b`` (``a < b``) had together since ``since``."""

    async def walkouts(self, pid: str, since: int) -> list[int]:
        """When the player walked out of rated races (aborted them) since ``since``."""

    async def scored(self, race: str) -> dict[str, Any] | None:
        """The ``ratings`` body of a scored race; None if not scored (yet)."""

    async def to_score(self, limit: int) -> list[str]:
        """Races with players that may be finished and not scored (the sweep looks at them)."""

    async def done_scoring(self, race: str) -> None:
        """Nothing to score in this race (it has no players after all)."""

    async def results(self, pid: str, limit: int = 20) -> list[dict[str, Any]]:
        """The player's latest results, newest first (``Result.as_dict``)."""

    async def leaderboard(self, game: str, min_races: int, max_deviation: float,
                          limit: int) -> list[dict[str, Any]]:
        """Players with at least ``min_races`` rated races of ``game`` and a deviation at most
        ``max_deviation``, best first: ``{id, name, rating, deviation, races}``."""

    async def daily(self, game: str, day: str) -> tuple[int, str] | None:
        """The day's deal of ``game`` (seed, salt), if drawn."""

    async def put_daily(self, game: str, day: str, seed: int, salt: str) -> tuple[int, str]:
        """Keep (seed, salt) as the day's deal unless one is kept already; the one kept."""

    async def daily_attempt(self, game: str, day: str, pid: str, race: str, net: str = "",
                            at: int = 0) -> str:
        """The player's attempt at the day's deal: ``race`` unless he has one already (that
        one is returned). A new one is kept with ``net`` (his network's tag) and ``at`` (unix
        ms): who opened an attempt from where, and when (:meth:`daily_lookers`)."""

    async def daily_lookers(self, game: str, day: str) -> list[dict[str, Any]]:
        """Every attempt opened at the day's deal, ended or not: ``{player, net, at}``."""

    async def daily_results(self, game: str, day: str) -> list[dict[str, Any]]:
        """Results of the day's attempts that ended."""

    async def days_played(self, pid: str, game: str, limit: int = 400) -> list[str]:
        """The days on which the player played ``game``'s daily deal to its end."""
