"""The arenas' HTTP routes (docs/protocol.md, "Arenas"): ``GET /api/arenas`` (the house's and
the players' arenas to come, running, and those of the last day) and ``GET /api/arenas/{id}``
(an arena's view, its whole table). Answers are worked out from what the process holds and,
for an arena another process runs, from the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from solrace.core.arena import Arena
from solrace.core.errors import Code
from solrace.protocol import arena_messages

if TYPE_CHECKING:
    from solrace.service.hub import Hub

#: Finished arenas stay listed this long (ms): "the last day's".
LISTED_AFTER_MS = 24 * 3600 * 1000


async def arena_api(hub: Hub, parts: list[str], listed: list[Arena]) -> tuple[int, Any]:
    """(status, body) of ``/api/arenas...``; ``listed``: the arenas to list (the schedule's
    and those created lately, held or read from the store by the caller)."""
    now = hub.clock()
    if len(parts) == 2:
        rows = [arena_messages.listing(a, now) for a in listed
                if a.finished_at is None or now - a.finished_at < LISTED_AFTER_MS]
        order = {"running": 0, "upcoming": 1, "finished": 2}
        rows.sort(key=lambda r: (order[r["status"]], r["starts_at"]))
        return 200, rows
    if len(parts) != 3:
        return 404, {"error": Code.NOT_FOUND}
    a = await hub.load_tournament(parts[2])
    if not isinstance(a, Arena):
        return 404, {"error": Code.NOT_FOUND}
    return 200, arena_messages.view(a, now, rows=None)
