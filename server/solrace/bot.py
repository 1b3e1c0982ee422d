"""A bot racer: joins a race (as a bot: every client labels it), says ready, and plays until it
finishes, resigns or time is up.

Policies: ``random`` (any legal move) and ``greedy`` (a move to a foundation first, else a
random one). The bot never plays a move that is not in the server's ``legal`` list, gives up
(resigns) when no legal move is left, and stops after ``max_moves`` moves so that a bot stuck
in a cycle does not run until the time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

from websockets.exceptions import ConnectionClosed

from .client import RaceClient, ServerError

Message = dict[str, Any]
log = logging.getLogger(__name__)


def choose(state: Message, policy: str, rng: random.Random) -> str | None:
    legal: list[str] = state["legal"]
    if not legal:
        return None
    if policy == "greedy":
        home = [m for m in legal if m.split(">")[1].startswith("f")]
        if home:
            return rng.choice(home)
        # Avoid taking cards back off the foundations, which only undoes progress.
        rest = [m for m in legal if not m.startswith("f")]
        if rest:
            return rng.choice(rest)
    return rng.choice(legal)


async def play(
    url: str | list[str],
    race: str,
    name: str = "bot",
    policy: str = "greedy",
    delay: float = 0.2,
    max_moves: int = 2000,
    seed: int | None = None,
    token: str | None = None,
) -> Message:
    """Join ``race`` and play; returns the last ``state`` (or ``race_over``) seen.

    ``url`` may be a list of server addresses: when the connection is lost (a server process
    died or restarted), the bot connects to the next one, takes its racer back with its token
    and goes on; a move that was in flight is sent again with the same ``seq``, which the
    server applies at most once.
    """
    rng = random.Random(seed)
    urls = [url] if isinstance(url, str) else list(url)
    moves = 0
    attempt = 0
    state: Message | None = None
    while True:
        target = urls[attempt % len(urls)]
        try:
            async with await RaceClient.connect(target) as client:
                if token is None:
                    token = (await client.join(race, name=name, boards=False, bot=True))["token"]
                    with contextlib.suppress(ServerError):  # already started: just play
                        await client.ready(race)
                else:
                    await client.join(race, token=token, boards=False, bot=True)
                state = await client.wait_state(race, timeout=3600)
                attempt = 0
                while True:
                    if state["progress"]["foundation"] == state["progress"]["total"]:
                        return state
                    move = choose(state, policy, rng)
                    if move is None or moves >= max_moves:
                        await client.resign(race)
                        return state
                    try:
                        state = await client.move(race, move, state["seq"] + 1)
                    except ServerError as exc:
                        if exc.code == "race_not_running":
                            return state
                        if exc.code in ("rate_limited", "unavailable"):
                            await asyncio.sleep(0.5)
                            continue
                        raise
                    moves += 1
                    if delay:
                        await asyncio.sleep(delay)
        except (ConnectionError, ConnectionClosed, OSError, TimeoutError) as exc:
            attempt += 1
            if attempt > 10 * len(urls):
                raise
            log.info("bot %s: connection lost (%s), trying %s", name,
                     exc, urls[attempt % len(urls)])
            await asyncio.sleep(min(2.0, 0.1 * attempt))
