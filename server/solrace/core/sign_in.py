"""When someone may try a password again: sign-in failures slow the guesser down, per name and
per network, with delays that grow; the owner is never locked out from elsewhere.

Failures are counted under three keys (:func:`failure_keys`), each with the time of its last
failure, and forgotten an hour after that last one (the stores keep them):

- the name at this network (``p:``): someone here trying this name;
- this network (``a:``), whatever the names: someone here trying name after name;
- the name (``n:``), wherever the tries come from: a guesser spread over many networks.

Each key's failures, past a few free ones, ask for a delay since its last failure that doubles
with each: ``2^(k - free)`` seconds after ``k`` failures, up to a cap (:func:`backoff`). An
attempt made before every delay that applies to it is over is refused, unchecked, with the
seconds left (:class:`Throttled`: ``rate_limited`` and ``retry_after``): nothing is held for
it meanwhile, and nothing is counted.

At a network the player signed in from before (or set his password from), only the first key
applies: strangers' failures, here or elsewhere, never delay him there. At any other network
the name's own key is capped low (``SIGN_IN_NAME_DELAY_S``): a guesser spread over a thousand
addresses gets one try per that many seconds for a name, and the owner on a new network waits
that long at most. Pure: the counts and the time come in.
"""

from __future__ import annotations

import math

from solrace.core.errors import Code
from solrace.core.race_parts import RaceError
from solrace.settings import (
    SIGN_IN_ADDRESS_FREE_FAILURES,
    SIGN_IN_FREE_FAILURES,
    SIGN_IN_MAX_DELAY_S,
    SIGN_IN_NAME_DELAY_S,
)


class Throttled(RaceError):
    """``rate_limited``, with the seconds after which the same request would be taken
    (``retry_after`` in the reply)."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(Code.RATE_LIMITED, message)
        self.retry_after = max(1, math.ceil(retry_after))


def failure_keys(name_key: str, network: str) -> list[str]:
    """The keys a sign-in's failure is counted under: the name at this network, this network,
    the name (see the module docstring)."""
    return [f"p:{network}:{name_key}", f"a:{network}", f"n:{name_key}"]


def backoff(failures: int, free: int, cap: float) -> float:
    """Seconds to wait after ``failures`` failures, the first ``free`` of them free."""
    if failures < free:
        return 0.0
    return min(2.0 ** (failures - free), cap)


def _left(now: int, counted: tuple[int, int], free: int, cap: float) -> float:
    count, last = counted
    return max(0.0, last / 1000 + backoff(count, free, cap) - now / 1000)


def sign_in_wait(now: int, counts: list[tuple[int, int]], known: bool) -> float:
    """Seconds before a sign-in may be tried (0: now), given the failures under each of
    :func:`failure_keys` (count, last failure's time in ms) and whether the player signed in
    from this network before."""
    pair, network, name = counts
    waits = [_left(now, pair, SIGN_IN_FREE_FAILURES, SIGN_IN_MAX_DELAY_S)]
    if not known:
        waits.append(_left(now, network, SIGN_IN_ADDRESS_FREE_FAILURES, SIGN_IN_MAX_DELAY_S))
        waits.append(_left(now, name, SIGN_IN_FREE_FAILURES, SIGN_IN_NAME_DELAY_S))
    return max(waits)
