"""Benchmark: a player's post-race analysis while four addresses keep the solver busy.

    .venv/bin/python bench/analysis_fairness.py [--policy fair|fifo|both] [--game scotch]

The server (in this process, over real HTTP, with its real solver process and the server's
analysis budgets: 50,000 nodes and 3 s a position, 40 positions and 30 s an analysis) holds
32 finished races of one racer each on hard Scotch deals (the deals the catalogue leaves
unknown after 10 s): the racer tried every move from the deal and took it back, so every
position his analysis solves takes its whole budget, and each analysis its whole 30 s. Four
addresses (``X-Forwarded-For``) ask for the analyses of eight of them each, at once, as a
results page does, and keep asking as told (``Retry-After``) until they have them. After
``--head-start`` seconds (1.7 s more at each ``--repeat``) a fifth address asks for the
analysis of an ordinary race (a line of ``--actions`` actions as a racer plays: cards home
first, otherwise any move, some undos) and asks again as told until it has it.

Printed for each policy: the seconds from his first request to his report (as his client sees
it: to within the 2 s it is told to wait between requests), the positions his analysis solved,
and the positions of the four addresses the solver did meanwhile. ``fair`` is this tree's
queue and admission; ``fifo`` the ones before issue 28 (positions first come, first served; 8
analyses at once per process and 2 per address, one more refused), put back in this process
by switching the queue and the analyst. The goal (issue 28): done within 60 s.
It is a benchmark, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
sys.path.insert(0, str(Path(__file__).parent))

import solrules
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.net.app import App
from solrace.runtime.supervisor import Supervisor
from solrace.solver.analyst import Analyst
from solrace.solver.fair_queue import FairQueue
from solrace.solver.jobs import Job, Solver
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.lines import racer_line

CATALOGUE = Path(__file__).resolve().parents[1] / "seeds" / "catalogue" / "scotch.jsonl"
HEAVY = [f"10.0.0.{n}" for n in range(1, 5)]
NEWCOMER = "192.0.2.7"
PER_ADDRESS = 8


class FifoQueue(FairQueue[Job]):
    """The queue before issue 28: hints first, then par, then the analyses' positions in one
    line, first come, first served."""

    def __init__(self) -> None:
        super().__init__(analysis_turn=1 << 30)

    def add_analysis(self, job: Job, client: str = "", player: str = "") -> None:
        self.analyses.add("", "", job)


class OldAnalyst(Analyst):
    """The admission before issue 28: over 2 per address ``busy``, over 8 in the process
    ``full``, in that order, nothing kept for newcomers."""

    def __init__(self, solver: Solver, supervisor: Supervisor) -> None:
        super().__init__(solver, supervisor, limit=8, per_address=2)

    def ask(self, race: Race, player: str, address: str, requester: str | None = None
            ) -> tuple[str, dict[str, Any] | None]:
        known = self.known(race.race, player)
        if known is not None:
            return known
        if self.by_address.get(address, 0) >= self.per_address:
            return "busy", None
        if len(self.running) >= self.limit:
            return "full", None
        return super().ask(race, player, address, requester)


def hard_deals() -> list[int]:
    return [int(json.loads(line)["seed"]) for line in CATALOGUE.read_text().splitlines()
            if '"unknown"' in line]


def write_race(store: SQLiteStore, rid: str, game: str, seed: int, line: list[str]) -> None:
    """A finished race of one racer who played ``line`` (a second apart), into ``store``."""
    race = Race(rid, game, seed, "salt", Options(1, 86400, True), 1000, "host", 0)
    store.add_race(race)
    store.append(race.join("ann", f"tok-{rid}", 1000).log)
    store.append(race.start("host", 1000).log)
    race.tick(1000)
    for seq, action in enumerate(line, 1):
        at = 2000 + 1000 * seq
        out = (race.undo("p1", seq, at) if action == "undo"
               else race.move("p1", action, seq, at))
        store.append(out.log)
    end = 3000 + 1000 * len(line)
    store.append(race.resign("p1", end).log)
    store.mark_finished(rid, end)
    store.commit()


def write_races(db: Path, game: str, actions: int) -> tuple[list[str], str]:
    store = SQLiteStore(db)
    heavy = []
    deals = hard_deals()
    for n in range(len(HEAVY) * PER_ADDRESS):
        seed = deals[n % len(deals)]
        deal = solrules.new_game("scotch", seed)
        tries = [a for m in deal.legal_moves() for a in (m.text(), "undo")]
        write_race(store, f"heavy{n}", "scotch", seed, tries)
        heavy.append(f"heavy{n}")
    line = racer_line(game, 100, actions, random.Random(100))
    write_race(store, "his", game, 100, line)
    store.close()
    return heavy, "his"


async def get(port: int, path: str, address: str) -> tuple[int, int, dict[str, Any]]:
    """GET ``path`` from ``address``: (status, Retry-After or 0, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: {address}\r\n"
                 "Connection: close\r\n\r\n".encode())
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    retry = 0
    for h in lines[1:]:
        name, _, value = h.partition(":")
        if name.lower() == "retry-after":
            retry = int(value)
    return int(lines[0].split()[1]), retry, json.loads(body)


async def fetch(port: int, race: str, address: str) -> dict[str, Any]:
    """The analysis of ``race``'s racer, asked again as told until it comes."""
    while True:
        status, retry, body = await get(port, f"/api/races/{race}/analysis/p1", address)
        if status == 200:
            return body
        assert status == 202, (status, body)
        await asyncio.sleep(retry)


async def run(policy: str, db: Path, heavy: list[str], his: str, head_start: float,
              give_up: float) -> dict[str, Any]:
    store = SQLiteStore(db)
    solver = Solver(hint_seconds=0, par_seconds=0, nice=0)
    app = App(store, countdown=0.05, rate_limit=0, http_rate=0, trust_proxy=True,
              client=db.parent, solver=solver)
    if policy == "fifo":
        solver._queue = FifoQueue()
        app.routes.analyst = OldAnalyst(solver, app.hub.supervisor)
    analyst = app.routes.analyst
    out: dict[str, Any] = {"policy": policy}
    try:
        async with app.serve("127.0.0.1", 0) as ws_server:
            port = next(iter(ws_server.sockets)).getsockname()[1]
            theirs = [asyncio.ensure_future(fetch(port, race, HEAVY[n // PER_ADDRESS]))
                      for n, race in enumerate(heavy)]
            await asyncio.sleep(head_start)
            mark = solver.jobs_done
            t0 = time.perf_counter()

            async def watch() -> float:  # when the server has it (his client asks every 2 s)
                while (his, "p1") not in analyst.done:
                    await asyncio.sleep(0.02)
                return time.perf_counter() - t0

            watcher = asyncio.ensure_future(watch())
            try:
                async with asyncio.timeout(give_up):
                    report = await fetch(port, his, NEWCOMER)
                out["seconds"] = time.perf_counter() - t0
                out["server_seconds"] = await watcher
                out["solves"] = report["solves"]
                out["solver_seconds"] = report["solver_seconds"]
            except TimeoutError:
                out["seconds"] = None
                report = {"solves": 0}
                watcher.cancel()
            # (The old queue does not know whose a position is: the count is of all jobs.)
            out["theirs_meanwhile"] = solver.jobs_done - mark - report["solves"]
            out["theirs_done"] = sum(1 for t in theirs if t.done())
            out["theirs_running"] = len([k for k in analyst.running if k[0] != his])
            for t in theirs:
                t.cancel()
            await asyncio.gather(*theirs, return_exceptions=True)
    finally:
        await app.stop()
        store.close()
    return out


async def main(args: argparse.Namespace) -> None:
    policies = ["fifo", "fair"] if args.policy == "both" else [args.policy]
    with tempfile.TemporaryDirectory(prefix="analysis_fairness_") as tmp:
        for policy in policies:
            for n in range(args.repeat):
                db = Path(tmp) / f"{policy}{n}.db"
                heavy, his = write_races(db, args.game, args.actions)
                # (Each run's fifth comes a little later: another point of their rounds.)
                r = await run(policy, db, heavy, his, args.head_start + 1.7 * n,
                              args.give_up)
                took = (f"{r['seconds']:.1f} s (done on the server after {r['server_seconds']:.1f} "
                        f"s; {r['solves']} positions, {r['solver_seconds']:.1f} s of solver time)"
                        if r["seconds"] is not None else f"not done after {args.give_up:.0f} s")
                print(f"{policy}: his analysis ({args.game}, {args.actions} actions) {took}; "
                      f"meanwhile {r['theirs_meanwhile']} positions of the four addresses, "
                      f"{r['theirs_done']} of their 32 analyses done, {r['theirs_running']} "
                      "being worked out", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--policy", choices=("fair", "fifo", "both"), default="both")
    p.add_argument("--game", choices=solrules.GAMES, default="scotch")
    p.add_argument("--actions", type=int, default=80)
    p.add_argument("--head-start", type=float, default=10.0,
                   help="seconds the four addresses ask before the fifth")
    p.add_argument("--give-up", type=float, default=900.0)
    p.add_argument("--repeat", type=int, default=1, help="runs of each policy")
    asyncio.run(main(p.parse_args()))
