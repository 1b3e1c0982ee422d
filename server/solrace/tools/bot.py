"""A bot racer: joins a race (as a bot: every client labels it), says ready, and plays until it
finishes, resigns or time is up.

Policies: ``random`` (any legal move), ``greedy`` (a move to a foundation first, else a
random one) and ``solver`` (:class:`Planner`: a winning line found by the solver from what the
bot has seen). The bot never plays a move that is not in the server's ``legal`` list, gives up
(resigns) when no legal move is left, when ``give_up`` moves in a row made no progress (no
card home, no new card seen: a greedy bot can shuffle cards back and forth for minutes), and
after ``max_moves`` moves. Its pace is ``delay`` seconds between moves, thinking included:
the planner searches while the bot waits, for as long as it waits (at least ``MIN_THINK``;
with no ``delay``, its whole budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from typing import Any

import solrules
from websockets.exceptions import ConnectionClosed

from solrace.core.levels import choose, headway
from solrace.settings import BOT_GIVE_UP
from solrace.tools.race_client import RaceClient, ServerError

Message = dict[str, Any]
log = logging.getLogger(__name__)

#: The least time the planner searches for a move (s), even when the move is due at once.
MIN_THINK = 0.05


class Planner:
    """The ``solver`` policy: plays a line that wins a guess of its own board.

    The bot sees its board as any racer does: face-down cards (and the stock) hidden. It fills
    them in at random with the cards not on show (:func:`solrules.guess_game`), solves that
    position (every card known) and plays the winning line, move by move, for as long as the
    board the server sends is the board the line expects. A card turned up that is not the one
    guessed is a surprise: it guesses again and solves again from there. With no line found
    within the budget it plays the solver's first choice (or a card home) for a few moves and
    then tries again.
    """

    def __init__(self, rng: random.Random, nodes: int = 200_000, seconds: float = 3.0) -> None:
        self.rng = rng
        self.budget = solrules.Budget(nodes, seconds)
        self.game: solrules.Game | None = None  # the guess, advanced along the line
        self.line: list[str] = []
        self.base: str | None = None  # the foundations' base rank, once seen
        self.wait = 0  # moves to play before solving again after a failed search
        self.solves = 0
        self.surprises = 0

    def _base(self, board: Message) -> str | None:
        if self.base is None:
            for pile in board["piles"]:
                if pile["pile"].startswith("f") and pile["cards"] and pile["cards"][0]:
                    self.base = pile["cards"][0][0]
                    break
        return self.base

    def choose(self, state: Message, seconds: float | None = None) -> str | None:
        """The next move (blocking: the search may take up to the budget's seconds, or
        ``seconds`` if fewer: the time until the move is due)."""
        legal: list[str] = state["legal"]
        if not legal:
            return None
        board = state["board"]
        if self.game is not None and self.line and self.game.board() == board:
            move = self.line.pop(0)
            if move in legal:
                self.game.push_text(move)
                return move
        if self.game is not None and self.line:
            self.surprises += 1
        self.game, self.line = None, []
        if self.wait > 0:
            self.wait -= 1
            return self._fallback(state)
        guess = solrules.guess_game(board, self.rng, self._base(board))
        self.solves += 1
        budget = self.budget
        if seconds is not None and budget.seconds is not None and seconds < budget.seconds:
            scale = max(seconds, MIN_THINK) / budget.seconds
            budget = solrules.Budget(int((budget.nodes or 0) * scale) or None,
                                     max(seconds, MIN_THINK))
        result = solrules.solve(guess, budget, clock=time.perf_counter)
        if result.verdict == "won" and result.line and result.line[0] in legal:
            self.game, self.line = guess, list(result.line)
            move = self.line.pop(0)
            guess.push_text(move)
            return move
        self.wait = 5
        first = solrules.best_guess(guess)
        return first if first in legal else self._fallback(state)

    def _fallback(self, state: Message) -> str | None:
        safe = [m for m in state.get("safe", []) if m in state["legal"]]
        return safe[0] if safe else choose(state, "greedy", self.rng)


async def play(
    url: str | list[str],
    race: str,
    name: str = "bot",
    policy: str = "greedy",
    delay: float = 0.2,
    max_moves: int = 2000,
    seed: int | None = None,
    token: str | None = None,
    give_up: int = BOT_GIVE_UP,
) -> Message:
    """Join ``race`` and play; returns the last ``state`` (or ``race_over``) seen.

    ``url`` may be a list of server addresses: when the connection is lost (a server process
    died or restarted), the bot connects to the next one, takes its racer back with its token
    and goes on; a move that was in flight is sent again with the same ``seq``, which the
    server applies at most once.
    """
    rng = random.Random(seed)
    planner = Planner(rng) if policy == "solver" else None
    loop = asyncio.get_running_loop()
    last = 0.0
    urls = [url] if isinstance(url, str) else list(url)
    moves = 0
    attempt = 0
    best: tuple[int, int] = (-1, -1)
    stale = 0  # moves since the last progress
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
                    joined = await client.join(race, token=token, boards=False, bot=True)
                    snap = await client.watch(race)
                    if snap["status"] == "finished":
                        # It ended while the bot was away (an opponent resigned, say): what
                        # the server holds of this racer is the last word.
                        mine = next(p for p in snap["players"]
                                    if p["player"] == joined["player"])
                        return {**(state or {}), "type": "snapshot",
                                "seq": mine["progress"]["moves"],
                                "progress": mine["progress"]}
                state = await client.wait_state(race, timeout=3600)
                attempt = 0
                while True:
                    if state["progress"]["foundation"] == state["progress"]["total"]:
                        return state
                    # The pace: ``delay`` from one move to the next, thinking included: the
                    # planner thinks while the bot waits, for as long as it waits.
                    due = last + delay
                    time_left = max(0.0, due - loop.time()) if delay else None
                    thinking = (asyncio.create_task(asyncio.to_thread(
                                    planner.choose, state, time_left))
                                if planner is not None else None)
                    if delay:
                        await asyncio.sleep(max(0.0, due - loop.time()))
                    if thinking is not None:
                        move = await thinking
                    else:
                        move = choose(state, policy, rng)
                    now = headway(state)
                    if now > best:
                        best, stale = now, 0
                    if move is None or moves >= max_moves or stale >= give_up:
                        with contextlib.suppress(ServerError):  # the race may be over
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
                    stale += 1
                    last = loop.time()
        except (ConnectionError, ConnectionClosed, OSError, TimeoutError) as exc:
            attempt += 1
            if attempt > 10 * len(urls):
                raise
            log.info("bot %s: connection lost (%s), trying %s", name,
                     exc, urls[attempt % len(urls)])
            await asyncio.sleep(min(2.0, 0.1 * attempt))
