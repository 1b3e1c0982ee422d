"""The garbage collector, tended for a long-running server.

CPython's collector stops everything while it runs, and its full (oldest-generation) runs walk
every container object the process holds: with 2,000 idle connections and 1,000 races nobody
moves in, measured runs took hundreds of milliseconds (over a second on a loaded machine), and
every move that arrived meanwhile waited (bench/race_bench.py ``--beside-idle --beside-races``
with ``SOLRACE_GC_STATS=1``). Almost all of those objects live long (connections, races) and
hold no garbage. So the server *freezes* what it holds every ``GC_FREEZE_EVERY`` seconds
(``gc.freeze``: the collector ignores those objects from then on, and its runs walk only what
was made since), and every ``GC_FULL_EVERY`` seconds it unfreezes and runs one full collection
to free the rare cycles that became garbage while frozen (a finished race held in a cycle,
say): one pause every quarter of an hour instead of a pause whenever the heap grew by a quarter.
"""

from __future__ import annotations

import asyncio
import gc

from solrace.settings import GC_FREEZE_EVERY, GC_FULL_EVERY


async def tend() -> None:
    """Run for the server's life (cancel to stop; everything is unfrozen then)."""
    gc.freeze()
    since_full = 0.0
    try:
        while True:
            await asyncio.sleep(GC_FREEZE_EVERY)
            since_full += GC_FREEZE_EVERY
            if since_full >= GC_FULL_EVERY:
                since_full = 0.0
                gc.unfreeze()
                gc.collect()
            gc.freeze()
    finally:
        gc.unfreeze()
