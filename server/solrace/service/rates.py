"""Rates per client address: a token bucket each, for a bounded number of addresses at once.
The HTTP routes (solrace.net.web) and the players' service (solrace.service.accounts) count
with them."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from solrace.settings import HTTP_CLIENTS


class AddressRates:
    """A token bucket per client address (``rate`` per second, bursts of ``burst``, by default
    twice the rate), for at most ``size`` addresses at once (the least recently seen are
    forgotten)."""

    def __init__(self, rate: float, size: int = HTTP_CLIENTS,
                 clock: Callable[[], float] = time.monotonic, burst: float | None = None
                 ) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else 2 * rate
        self.size = size
        self.clock = clock
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when

    def allow(self, address: str, cost: float = 1.0) -> bool:
        return self.wait(address, cost) == 0.0

    def wait(self, address: str, cost: float = 1.0) -> float:
        """0.0 if a request of ``cost`` may go now (and it is counted); else the seconds until
        it could (for ``Retry-After``), and nothing is counted."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, then = self.buckets.pop(address, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        allowed = tokens >= cost
        self.buckets[address] = (tokens - cost if allowed else tokens, now)
        while len(self.buckets) > self.size:
            self.buckets.popitem(last=False)
        return 0.0 if allowed else (cost - tokens) / self.rate
