"""The builder: heavy pure work (a replay's body) done in one spawned, niced process of its own,
started on first use, so that the server's event loop never holds the interpreter's lock for
seconds; the same job asked for twice at once is done once."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def _start_builder(nice: int) -> None:
    """The builder's process, as it starts: a lower priority (``nice``), and a thread that
    ends it when the server's process is gone. A killed server (``kill -9``, the OOM killer)
    closes no pipe the builder reads from (a spawned worker holds both ends of its job queue),
    so without it the builder, and multiprocessing's resource tracker with it, would wait
    forever."""
    with contextlib.suppress(OSError):  # not allowed here: same priority, off the loop
        os.nice(nice)
    parent = multiprocessing.parent_process()
    if parent is not None:
        def exit_with_parent() -> None:
            multiprocessing.connection.wait([parent.sentinel])
            os._exit(0)

        threading.Thread(target=exit_with_parent, name="exit with the server",
                         daemon=True).start()


class Builder:
    """Runs jobs in one spawned, niced process (see the module docstring)."""

    def __init__(self, nice: int = 10) -> None:
        self._nice = nice
        self._pool: ProcessPoolExecutor | None = None
        self._building: dict[Hashable, asyncio.Future[Any]] = {}

    async def run(self, key: Hashable, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``fn(*args)`` in the builder's process (``fn`` and ``args`` are sent there: a
        module-level function and plain data); a job whose ``key`` is being done already
        waits for that one instead."""
        fut = self._building.get(key)
        if fut is None:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_builder, initargs=(self._nice,))
            loop = asyncio.get_running_loop()
            fut = asyncio.ensure_future(loop.run_in_executor(self._pool, fn, *args))
            self._building[key] = fut
            fut.add_done_callback(lambda _: self._building.pop(key, None))
        return await asyncio.shield(fut)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
