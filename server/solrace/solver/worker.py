"""The solver's process: ``python -m solrace.solver.worker``, started by :mod:`solrace.solver.jobs`.

The search is pure Python and CPU-bound: run in the server's process it would hold the GIL for
seconds and every race there would stall. So it runs here, at a lower priority, one job at a
time. Jobs and answers are msgpack maps, each framed by a 4-byte big-endian length, on stdin and
stdout:

- ``{"q": id, "k": "par", "g": game, "s": seed, "n": nodes, "t": seconds}`` → ``{"q", "verdict",
  "moves"}``: the solver on the deal itself (every card known);
- ``{"q": id, "k": "hint", "g", "s", "a": actions, "p": plan key, "n", "t", "r": rng seed,
  "l"?: true}`` → ``{"q", "move", "source", "lost", "line"?}``: a move for the racer whose
  actions (move texts and ``"undo"``) are ``a``, from what he has seen only (see
  :func:`hint`); with ``l`` (a house bot's), the winning line from there, ``move`` first;
- ``{"q": id, "k": "solve", "g", "s", "a": actions, "n", "t"}`` → ``{"q", "verdict", "line",
  "nodes", "seconds"}``: the solver on the racer's position after ``a``, every card known
  (a post-race analysis, after the reveal: see :mod:`solrace.solver.analysis`).

Any failure of a job is answered ``{"q", "error"}``; the process goes on.
"""

from __future__ import annotations

import contextlib
import os
import random
import struct
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, BinaryIO

import msgpack
import solrules

from solrace.settings import MAX_PLANS, QUICK_LOSS_NODES, RESAMPLES


@dataclass
class Plan:
    """A winning line found on a sample of the racer's position, and where it stands."""

    actions: list[str]  # the racer's actions when it was found
    game: solrules.Game  # the sample, advanced along the line as the racer follows it
    line: list[str]
    done: int = 0  # moves of the line the racer has played


plans: OrderedDict[str, Plan] = OrderedDict()


def replay(game: str, seed: int, actions: list[str]) -> solrules.Game:
    real = solrules.new_game(game, seed)
    for action in actions:
        if action == "undo":
            real.pop()
        else:
            real.push_text(action)
    return real


def _follow(plan: Plan, real: solrules.Game, actions: list[str]) -> str | None:
    """The plan's next move if the racer has followed it so far and every card he turned up
    is the sample's; None if the plan no longer holds."""
    start = len(plan.actions)
    if actions[:start] != plan.actions:
        return None
    since = actions[start:]
    if len(since) < plan.done or since[:plan.done] != plan.line[:plan.done]:
        return None
    for text in since[plan.done:]:
        if plan.done >= len(plan.line) or text != plan.line[plan.done]:
            return None
        plan.game.push_text(text)
        plan.done += 1
    if plan.done >= len(plan.line) or plan.game.board() != real.board():
        return None
    return plan.line[plan.done]


def hint(job: dict[str, Any]) -> dict[str, Any]:
    """A hint job: the racer's position rebuilt from the deal and his actions, then
    :func:`hint_for`."""
    actions = list(job["a"])
    real = replay(job["g"], int(job["s"]), actions)
    answer = hint_for(real, actions, job["p"], solrules.Budget(job["n"], job["t"]),
                      random.Random(job["r"]))
    plan = plans.get(job["p"])
    if job.get("l") and answer["source"] == "solver" and plan is not None:
        # (A house bot's question: the line from here, its move first, which the bot plays
        # on from when a later answer comes too late. Never a racer's: one hint, one move.)
        answer["line"] = plan.line[plan.done:]
    return answer


def hint_for(real: solrules.Game, actions: list[str], key: str, budget: solrules.Budget,
             rng: random.Random) -> dict[str, Any]:
    """One move for the racer at ``real`` (after ``actions``): the next move of a winning line.

    Only what the racer has seen is used. Where cards are hidden (Yukon, Quadruple Canfield),
    the line is found on a sample of his position (:func:`solrules.sample_unseen`): a line that
    would win if the cards he has not seen lay as sampled. It is kept (under ``key``), and the
    next hint follows it as long as the racer does and the cards he turns up match; otherwise
    it is solved again. With no line within the budget, the solver's first choice
    (``"heuristic"``). ``lost``: in a position with no unseen card (Scotch), the solver proved
    that no line wins from here.
    """
    legal = real.legal_by_text()
    plan = plans.get(key)
    if plan is not None:
        move = _follow(plan, real, actions)
        if move is not None and move in legal:
            plans.move_to_end(key)
            return {"move": move, "source": "solver", "lost": False}
        del plans[key]
    # Cards face down now that the racer has never seen: their places are his guess.
    hidden = bool(((1 << (52 * real.decks)) - 1) & ~real.face_up() & ~real.seen)
    sample = solrules.sample_unseen(real, rng) if hidden else real.copy()
    result = solrules.solve(sample, budget, clock=time.perf_counter)
    # A sample proved lost at once (a deadlock of the hidden cards as sampled, seen at its
    # root: about one sample in ten of a Yukon deal) says nothing of the real deal: sample
    # again, a few times (each such proof costs a few nodes).
    for _ in range(RESAMPLES):
        if not (hidden and result.verdict == "lost" and result.nodes <= QUICK_LOSS_NODES):
            break
        sample = solrules.sample_unseen(real, rng)
        result = solrules.solve(sample, budget, clock=time.perf_counter)
    if result.verdict == "won" and result.line and result.line[0] in legal:
        plans[key] = Plan(list(actions), sample, list(result.line))  # solve() left it as it was
        while len(plans) > MAX_PLANS:
            plans.popitem(last=False)
        return {"move": result.line[0], "source": "solver", "lost": False}
    guess = solrules.best_guess(sample)
    if guess is not None and guess not in legal:
        guess = None
    if guess is None and hidden and legal:
        # Every sample lost: the racer still gets a move (the real deal may well be won).
        guess = next(iter(legal))
    return {"move": guess, "source": "heuristic",
            "lost": result.verdict == "lost" and not hidden}


def par(job: dict[str, Any]) -> dict[str, Any]:
    """The solver's line length for the deal (every card known), or why there is none."""
    game = solrules.new_game(job["g"], int(job["s"]))
    result = solrules.solve(game, solrules.Budget(job["n"], job["t"]), clock=time.perf_counter)
    out: dict[str, Any] = {"verdict": result.verdict}
    if result.verdict == "won":
        out["moves"] = len(result.line)
    return out


def solve_position(job: dict[str, Any]) -> dict[str, Any]:
    """A position of a post-race analysis: the racer's position rebuilt from the deal and his
    actions, solved knowing every card. ``line`` (won): the winning moves from there."""
    game = replay(job["g"], int(job["s"]), list(job["a"]))
    result = solrules.solve(game, solrules.Budget(job["n"], job["t"]), clock=time.perf_counter)
    return {"verdict": result.verdict, "line": list(result.line), "nodes": result.nodes,
            "seconds": result.seconds}


JOBS = {"hint": hint, "par": par, "solve": solve_position}


def read_frame(stream: BinaryIO) -> bytes | None:
    head = stream.read(4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack(">I", head)
    body = stream.read(size)
    return body if len(body) == size else None


def main() -> None:
    with contextlib.suppress(OSError, AttributeError, ValueError, IndexError):
        # The races' process comes first: niced by 10 (hints), or as told (the pool's
        # refill, which nobody waits for, runs at 19).
        os.nice(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        frame = read_frame(stdin)
        if frame is None:
            return
        job = msgpack.unpackb(frame, raw=False)
        try:
            answer = JOBS[job["k"]](job)
        except Exception as exc:  # a job that fails is answered, never the end of the worker
            answer = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        answer["q"] = job.get("q")
        body = msgpack.packb(answer)
        try:
            stdout.write(struct.pack(">I", len(body)) + body)
            stdout.flush()
        except BrokenPipeError:  # the server is gone (or replaced this worker): so are we
            return


if __name__ == "__main__":
    main()
