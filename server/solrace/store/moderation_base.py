"""The durable record of fair play: who moderates, which results were flagged and cleared, which
accounts were closed for fair play, and the rating points given back to their opponents.

Every call is one transaction (SQLite) or one script (Redis) that the caller awaits:

- :meth:`ModerationStore.clear` marks a flagged result cleared and, when no flagged result of
  its race is left uncleared, applies the race's held rating changes from the ratings as they
  are then — once: a second clear finds nothing to do;
- :meth:`ModerationStore.close` marks an account closed and gives every opponent back the
  rating points he lost to it in rated races, once per race and opponent (a refund is recorded
  with the race, so a second close gives nothing twice); the account's held races are dropped
  (they count for nobody).

Implementations: :class:`solrace.store.sqlite_moderation.SQLiteModeration` (the races' file)
and :class:`solrace.store.redis_moderation.RedisModeration`.
"""

from __future__ import annotations

from typing import Any, Protocol


class ModerationStore(Protocol):
    async def set_role(self, pid: str, role: str | None) -> None:
        """Give the player a role (``"moderator"``), or take it (None)."""

    async def role(self, pid: str) -> str | None: ...

    async def roles(self) -> list[tuple[str, str]]:
        """Every player with a role: (id, role)."""

    async def flagged(self, limit: int) -> list[dict[str, Any]]:
        """Flagged results not cleared yet, of accounts not closed, most suspicious first:
        result rows (``Result.as_dict``) with the player's ``name``."""

    async def clear(self, race: str, pid: str, by: str | None, now: int
                    ) -> dict[str, Any] | None:
        """Clear the player's flagged result in ``race``: ``{"race", "player", "ratings"}``
        where ``ratings`` is the race's new ``ratings`` body if its held changes were applied
        now (else None); None if there is no such flagged, uncleared result."""

    async def close(self, pid: str, by: str | None, reason: str, now: int) -> dict[str, Any]:
        """Close the account for fair play: ``{"closed": bool (False: closed already),
        "refunds": [{"race", "player", "game", "points"}], "dropped": [race, ...]}``."""

    async def closed(self, pids: list[str]) -> set[str]:
        """Which of these players' accounts are closed."""

    async def closure(self, pid: str) -> dict[str, Any] | None:
        """``{"at", "reason"}`` if the account is closed."""
