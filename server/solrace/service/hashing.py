"""Password hashing off the event loop, in a small pool of its own, fair between addresses.

A password check or a new password is one scrypt: some 50 ms of CPU and 16 MiB of memory
(solrace.core.identity). They run in ``PASSWORD_THREADS`` threads of their own (scrypt lets
go of the GIL: the event loop keeps serving meanwhile), never in asyncio's default executor,
which other work shares. Jobs wait in one queue per client address, and the threads take
them in turn, one address after another (round robin): a flood of sign-ins from 40 addresses
delays a 41st address's by at most about one hash per address ahead of it, however many each
sent. What may wait is bounded: ``PASSWORD_WAITING_PER_ADDRESS`` jobs per address and
``PASSWORD_WAITING`` in all, and each address may ask for ``PASSWORD_HASH_RATE`` hashes a
second (bursts of ``PASSWORD_HASH_BURST``); beyond, the request is refused at once
(``rate_limited`` with ``retry_after``), before it costs anything.

A caller that is cancelled while its job waits takes the job out of the queue; one cancelled
while its job runs leaves it to finish (a thread cannot be stopped) and its result is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from solrace.core.sign_in import Throttled
from solrace.service.rates import AddressRates
from solrace.settings import (
    PASSWORD_HASH_BURST,
    PASSWORD_HASH_RATE,
    PASSWORD_THREADS,
    PASSWORD_WAITING,
    PASSWORD_WAITING_PER_ADDRESS,
)

T = TypeVar("T")


@dataclass(eq=False)
class _Job:
    work: Callable[[], Any]
    done: asyncio.Future[Any]
    #: Hashes started when it was queued: what it waited for is ``started`` then minus this.
    mark: int
    address: str = field(default="")


class PasswordPool:
    """See the module docstring. ``history`` keeps, for the latest jobs started, their address
    and how many hashes started while each waited (what tests and the bench count)."""

    def __init__(self, threads: int = PASSWORD_THREADS,
                 per_address: int = PASSWORD_WAITING_PER_ADDRESS,
                 limit: int = PASSWORD_WAITING, rate: float = PASSWORD_HASH_RATE,
                 burst: float = PASSWORD_HASH_BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threads = threads
        self.per_address = per_address
        self.limit = limit
        self.rates = AddressRates(rate, clock=clock, burst=burst)
        self._executor: ThreadPoolExecutor | None = None
        #: Waiting jobs per address; the first address is the next to be served.
        self.queues: OrderedDict[str, deque[_Job]] = OrderedDict()
        self.waiting = 0
        self.running = 0
        self.started = 0
        self.history: deque[tuple[str, int]] = deque(maxlen=4096)

    async def run(self, address: str, work: Callable[[], T]) -> T:
        """``work()`` in a thread of the pool, in ``address``'s turn. :class:`Throttled` when
        the address (or everyone) has too many waiting, or asked for too many lately."""
        queue = self.queues.get(address)
        if queue is not None and len(queue) >= self.per_address:
            raise Throttled("your network has too many password checks waiting: wait a moment",
                            1.0)
        if self.waiting >= self.limit:
            raise Throttled("too many password checks waiting: try again in a moment", 1.0)
        wait = self.rates.wait(address)
        if wait:
            raise Throttled("too many password checks from your network: wait a moment", wait)
        job = _Job(work, asyncio.get_running_loop().create_future(), self.started, address)
        self.queues.setdefault(address, deque()).append(job)
        self.waiting += 1
        self._feed()
        try:
            result: T = await job.done
        except asyncio.CancelledError:
            waiting = self.queues.get(address)
            if waiting is not None and job in waiting:
                waiting.remove(job)
                self.waiting -= 1
                if not waiting:
                    del self.queues[address]
            raise
        return result

    def _feed(self) -> None:
        """Start jobs while a thread is free, the next address's first each time."""
        while self.running < self.threads and self.queues:
            address, queue = next(iter(self.queues.items()))
            job = queue.popleft()
            self.waiting -= 1
            if queue:
                self.queues.move_to_end(address)  # its next job after everyone else's
            else:
                del self.queues[address]
            self.running += 1
            self.history.append((address, self.started - job.mark))
            self.started += 1
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.threads,
                                                    thread_name_prefix="solrace-password")
            self._executor.submit(job.work).add_done_callback(
                self._back(asyncio.get_running_loop(), job))

    def _back(self, loop: asyncio.AbstractEventLoop, job: _Job
              ) -> Callable[[Future[Any]], None]:
        """What the thread calls when a job is done: back to the loop with its result."""
        def back(ran: Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(self._finished, job, ran)

        return back

    def _finished(self, job: _Job, ran: Future[Any]) -> None:
        self.running -= 1
        if ran.cancelled():
            job.done.cancel()
        elif not job.done.done():
            error = ran.exception()
            if error is not None:
                job.done.set_exception(error)
            else:
                job.done.set_result(ran.result())
        self._feed()

    def close(self) -> None:
        """Drop what waits; a hash running finishes in its thread."""
        for queue in self.queues.values():
            for job in queue:
                job.done.cancel()
        self.queues.clear()
        self.waiting = 0
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
