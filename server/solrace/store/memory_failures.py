"""Failed sign-ins counted in one process's memory (the embedded server is one process; on Redis
they are shared: solrace.store.redis_players).

A key (a name, a network, or the two together: solrace.service.accounts) has a count and the
time of its last failure; it is forgotten ``SIGN_IN_FORGET_S`` after that last failure. At most
``size`` keys are kept: past that the least recently failed is forgotten first, so a flood of
made-up names costs a bounded amount of memory (and forgets the oldest counts, not the newest).
"""

from __future__ import annotations

from collections import OrderedDict

from solrace.settings import SIGN_IN_FORGET_S, SIGN_IN_KEYS


class MemoryFailures:
    def __init__(self, size: int = SIGN_IN_KEYS, forget_ms: int = SIGN_IN_FORGET_S * 1000
                 ) -> None:
        self.size = size
        self.forget_ms = forget_ms
        self.counts: OrderedDict[str, tuple[int, int]] = OrderedDict()  # count, last (ms)

    def get(self, keys: list[str], now: int) -> list[tuple[int, int]]:
        """(count, time of the last failure) per key; (0, 0) for a key with none."""
        out = []
        for key in keys:
            count, last = self.counts.get(key, (0, 0))
            if count and last <= now - self.forget_ms:
                del self.counts[key]
                count, last = 0, 0
            out.append((count, last))
        return out

    def add(self, keys: list[str], now: int) -> None:
        """One more failure under each key, now."""
        for key, (count, _) in zip(keys, self.get(keys, now), strict=True):
            self.counts[key] = (count + 1, now)
            self.counts.move_to_end(key)
        while len(self.counts) > self.size:
            self.counts.popitem(last=False)

    def clear(self, keys: list[str]) -> None:
        for key in keys:
            self.counts.pop(key, None)
