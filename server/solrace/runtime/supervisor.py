"""Every background task of one server process, in one place.

A process runs a few loops for as long as it serves (the solver's feeder, the pool's refill,
the Redis service's renewals and janitor, each connection's writer) and many short jobs (a race
loaded from the store, a probe write, a hint, a unit taken over). All of them are started
through :meth:`Supervisor.spawn`, with a name and, for a job, a timeout: a job that overruns
is cancelled (and says so in the log), one that fails is logged with its name, none is
forgotten, and :meth:`Supervisor.close` cancels whatever still runs and waits for it when the
process stops. Nothing is fire-and-forget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


def awaiting(task: asyncio.Task[Any]) -> str:
    """Where ``task`` waits, as a traceback: its coroutine and every coroutine it awaits down to
    the future at the bottom (``Task.print_stack`` shows only the outermost coroutine of a
    suspended task, which does not say what it waits on)."""
    lines = [f"{task.get_name()} (most recent call last):"]
    step: Any = task.get_coro()
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "gi_frame", None)
        if frame is None:  # a future, or a coroutine already done
            lines.append(f"  waiting on {step!r}")
            break
        lines.append(f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, '
                     f"in {frame.f_code.co_name}")
        step = getattr(step, "cr_await", None) or getattr(step, "gi_yieldfrom", None)
    return "\n".join(lines)


class Supervisor:
    """See the module docstring."""

    def __init__(self) -> None:
        self.tasks: dict[asyncio.Task[Any], str] = {}

    def spawn(self, coro: Coroutine[Any, Any, T], name: str,
              timeout: float | None = None) -> asyncio.Task[T]:
        """Run ``coro`` as a task of this process. ``timeout`` (seconds): a job is cancelled
        after it; None for a loop that runs until the process stops. The task is returned (to
        await its result, or cancel it); its failure is logged here whether or not anyone
        awaits it."""
        task = asyncio.get_running_loop().create_task(self._run(coro, name, timeout),
                                                       name=name)
        self.tasks[task] = name
        task.add_done_callback(self._done)
        return task

    @staticmethod
    async def _run(coro: Coroutine[Any, Any, T], name: str, timeout: float | None) -> T:
        if timeout is None:
            return await coro
        try:
            async with asyncio.timeout(timeout):
                return await coro
        except TimeoutError:
            log.warning("%s took more than %.1f s: cancelled", name, timeout)
            raise

    def _done(self, task: asyncio.Task[Any]) -> None:
        name = self.tasks.pop(task, "?")
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not isinstance(exc, TimeoutError):
            log.error("%s failed", name, exc_info=exc)

    def running(self) -> list[str]:
        """The names of the tasks running now (for diagnostics and tests)."""
        return sorted(self.tasks.values())

    async def close(self, timeout: float = 2.0) -> None:
        """Cancel every task still running and wait for them (at most ``timeout``)."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await asyncio.gather(*tasks, return_exceptions=True)
