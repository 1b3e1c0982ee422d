"""What an open race costs Chromium: CPU seconds while nothing happens, and per opponent move.

Run from the repository root (Chromium from Debian, as the browser tests use it)::

    .venv/bin/python bench/browser_cpu.py                          # this client alone
    .venv/bin/python bench/browser_cpu.py --against /path/to/tree  # and another tree's client

For each client (this checkout's ``client/``, and ``--against``'s ``client/`` served by the same
server code through ``--client-dir``), a race of three (the page's racer, a bot, a third racer)
is started and two pages are opened on it: the racer's race page and a spectator page, in rounds
that alternate between the clients (a noisy machine weighs on both alike), one race open at a
time. Measured: the CPU time of the Chromium processes of this run (from ``/proc``) to open the
two pages (contexts, loads, joining, the start), over ``--idle`` seconds of nothing, then over
``--moves`` moves of the bot, 0.1 s apart. Reported:
per client, the median over the rounds of the idle share of a core and of the milliseconds per
move (both pages together); with ``--against``, this client's figures over the other's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.client.conftest import start_server
from tests.client.helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Bot,
    Pages,
    create_race,
    join_as,
)

HZ = os.sysconf("SC_CLK_TCK")


def chromium_cpu() -> float:
    """CPU seconds of the Chromium processes this process started (through Playwright's
    driver), alive now: other browsers on the machine (a test suite) do not count."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:
            continue
        fields = tail.split()
        pid = int(name)
        parent[pid] = int(fields[1])
        if "chrom" in head.split("(", 1)[1]:
            cpu[pid] = (int(fields[11]) + int(fields[12])) / HZ
    me = os.getpid()

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == me:
                return True
            pid = parent.get(pid, 1)
        return False

    return sum(t for pid, t in cpu.items() if ours(pid))


class Scene:
    """A running race on the server at ``base``, its racer's page and a spectator's page."""

    def __init__(self, browser: Any, base: str, game: str) -> None:
        self.pages = Pages(browser, base)
        created = create_race(base, game=game, players=3, seed="123456")
        self.race = created["race"]
        page = self.pages.open(f"/race/{self.race}")
        join_as(page, "Ann")
        self.bot, self.other = Bot(base), Bot(base)
        self.bot.request({"type": "join", "race": self.race, "name": "Robo", "bot": True})
        self.other.request({"type": "join", "race": self.race, "name": "Zed"})
        self.bot.request({"type": "start", "race": self.race, "token": created["host_token"]})
        page.wait_for_selector('[data-board="own"] [data-card]', timeout=20000)
        watch = self.pages.open(f"/race/{self.race}/watch")
        watch.wait_for_selector('[data-board="p2"] [data-card]', timeout=20000)
        time.sleep(1)

    def idle(self, seconds: float) -> float:
        """Share of a core over ``seconds`` of nothing."""
        c0, t0 = chromium_cpu(), time.monotonic()
        time.sleep(seconds)
        return (chromium_cpu() - c0) / (time.monotonic() - t0)

    def moves(self, count: int) -> float:
        """Milliseconds of Chromium CPU per bot move (the idle cost of those seconds included)."""
        c0 = chromium_cpu()
        for _ in range(count):
            self.bot.play(self.race, 1)
            time.sleep(0.1)
        return (chromium_cpu() - c0) / count * 1000

    def close(self) -> None:
        self.bot.close()
        self.other.close()
        self.pages.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="a tree whose client/ to compare with")
    parser.add_argument("--game", default="quadruple-canfield")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of nothing per round")
    parser.add_argument("--moves", type=int, default=20, help="bot moves per round")
    parser.add_argument("--nodes", action="store_true", help="print the pages' element counts")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    clients = {"this": None}
    if args.against:
        clients["against"] = str(args.against.resolve() / "client")
    bases: dict[str, str] = {}
    servers = []
    opening: dict[str, list[float]] = {n: [] for n in clients}
    idle: dict[str, list[float]] = {n: [] for n in clients}
    per_move: dict[str, list[float]] = {n: [] for n in clients}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for name, client_dir in clients.items():
            db = Path(tempfile.mkdtemp()) / "races.db"
            extra = ["--client-dir", client_dir] if client_dir else []
            gen = start_server(db, "--pool", "0", *extra)
            servers.append(gen)
            bases[name] = next(gen)
        # One scene open at a time: every page of the browser counts in its CPU time.
        for _ in range(args.rounds):
            for name, base in bases.items():
                c0 = chromium_cpu()
                scene = Scene(browser, base, args.game)
                opening[name].append(chromium_cpu() - c0)
                if args.nodes:
                    for page in scene.pages.contexts:
                        print(name, "DOM elements:", page.pages[0].evaluate(
                            "document.getElementsByTagName('*').length"))
                idle[name].append(scene.idle(args.idle))
                per_move[name].append(scene.moves(args.moves))
                scene.close()
        browser.close()
    for gen in servers:
        gen.close()
    scenes = clients
    for name in scenes:
        print(f"{name:8} opening {statistics.median(opening[name]):5.2f} CPU-s, "
              f"idle {statistics.median(idle[name]) * 100:5.1f} % of a core, "
              f"{statistics.median(per_move[name]):5.1f} ms of Chromium CPU per move "
              f"(two pages; {args.game})")
    if "against" in scenes:
        ratio = {name: statistics.median(v["this"]) / statistics.median(v["against"])
                 for name, v in (("opening", opening), ("idle", idle), ("per move", per_move))}
        print("this/against: " + ", ".join(f"{k} {r:.2f}x" for k, r in ratio.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
