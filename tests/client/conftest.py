"""Fixtures for the browser tests: a real ``solrace serve`` subprocess and Debian's Chromium (its
headless shell where installed, see ``helpers.CHROMIUM``) driven by Playwright (sync API; never
``playwright install``). Every page opened through the ``pages`` fixture is watched: a test fails
on any JavaScript console error or uncaught exception. Screenshots go to ``test-artifacts/`` at
the repo root.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.helpers import CHROMIUM, CHROMIUM_ARGS, REPO, WAIT_MS, Bot, Pages

sync_api = pytest.importorskip("playwright.sync_api")

# Playwright's ``wait_for_function`` polls on every animation frame unless told otherwise: a
# page that waits draws sixty frames a second (measured: 8 % of a core per waiting page, against
# 1.4 % idle), and the suite's few cores pay for every one. A look every 50 ms costs a test at
# most that much more waiting.
_wait_for_function = sync_api.Page.wait_for_function


def _wait_polled(self: Any, expression: str, *, arg: Any = None, timeout: float | None = None,
                 polling: float | str | None = None) -> Any:
    return _wait_for_function(self, expression, arg=arg, timeout=timeout,
                              polling=50 if polling is None else polling)


sync_api.Page.wait_for_function = _wait_polled  # type: ignore[method-assign]


def server_env() -> dict[str, str]:
    """The environment of a server started by these tests: this checkout's packages first, so
    that a git worktree tests its own server and client, not an editable install of another."""
    paths = [str(REPO / "shared"), str(REPO / "server")]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + ([old] if old else []))}


def start_server(db: Path, *extra: str, prelude: str | None = None) -> Iterator[str]:
    """Run ``solrace serve`` on ``db`` (this checkout's server and ``client/``) until the
    generator is closed; yields its base URL, once its pool of winnable deals (if ``extra`` asks
    for one) is full. ``prelude``: Python run before the command line (to shorten a server
    constant for a test)."""
    # --http-rate: the HTTP rate is per client address, and every browser of a test comes from
    # 127.0.0.1; a page load of the client alone is about 30 requests (its modules).
    # --solver-nice 0: the solver's answers have time budgets, and beside a CPU burner at the
    # normal priority (make test-under-load) a niced solver would leave a post-race analysis's
    # positions unknown that it decides in a fraction of its budget on an idle machine.
    # --builder-nice 0: likewise for the replays of long races (built in a process of their own).
    # --pool 0 unless ``extra`` asks for winnable deals (a later --pool wins): the default pool
    # (50 deals a game, 2 s each) kept a core busy for as long as such a server lived. The
    # pool's solver at nice 0 too: at nice 19 beside the suite's own busy processes (Chromium)
    # its 1-second budgets left every deal unknown, and the pool never filled.
    args = ["serve", "--port", "0", "--db", str(db), "--countdown", "1", "--rate-limit", "0",
            "--http-rate", "200", "--solver-nice", "0", "--pool", "0", "--pool-nice", "0",
            "--builder-nice", "0",
            "--client-dir", str(REPO / "client"), *extra]  # fmt: skip
    if prelude:
        command = [sys.executable, "-c", f"import sys; {prelude}; from solrace.tools.cli "
                   "import main; sys.exit(main())", *args]
    else:
        command = [sys.executable, "-m", "solrace", *args]
    proc = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=server_env(),
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # keeps reading so the server never blocks on a full pipe
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    try:
        while not seen or "serving http://" not in seen[-1]:
            try:
                seen.append(lines.get(timeout=WAIT_MS / 1000 * 2))
            except queue.Empty:
                pytest.fail(f"server did not start: {''.join(seen)}")
        base = seen[-1].split("serving ", 1)[1].strip().rstrip("/")
        pool = int(args[max(i for i, a in enumerate(args) if a == "--pool") + 1])
        if pool > 0:
            wait_for_pool(base, pool)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=WAIT_MS / 1000)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_for_pool(base: str, size: int) -> None:
    """Wait until the server at ``base`` has ``size`` winnable deals ready for every game (its
    ``/api/games``): a test that deals one (a winnable race, the daily deal, a tournament) must
    not find the pool still being solved, which on a loaded machine takes many seconds (45 s
    seen under a load of 20 on two cores: a deal undecided within --pool-seconds is dropped)."""
    deadline = time.monotonic() + WAIT_MS / 1000 * 12
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while True:
        with opener.open(base + "/api/games", timeout=WAIT_MS / 1000) as res:
            games = json.load(res)
        if all(g.get("pool", {}).get("ready", 0) >= size for g in games):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the pool of winnable deals is not ready: {games}")
        time.sleep(0.1)


#: An analysis's budgets are seconds of wall time (3 s a position, 30 s a racer): on a loaded
#: machine the solver's share of a core is small, and a position it decides in a fraction of
#: that on an idle machine came back unknown ("No loss proved" instead of "winnable", seen
#: under a load of 17 on two cores). Four times as long is still bounded, and changes nothing
#: where the solver has its core: it stops when it knows.
#: And a quick race's seeker waits 60 s alone before a house bot takes him (10 by default): under
#: load, a second page's load and clicks took longer than 10 s, and the first seeker got a bot.
ANALYSES = ("import solrace.settings as s; s.ANALYSIS_POSITION_SECONDS *= 4; "
            "s.ANALYSIS_SECONDS *= 4; s.SEEK_BOT_AFTER_S = 60")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT``) of a real server with a 1-second countdown, a
    small private pool of winnable deals (two per game, solved before the first test), and
    post-race analyses with four times the solver's time and quick-race seeks left 60 s before a bot
    (see ``ANALYSES``)."""
    yield from start_server(tmp_path_factory.mktemp("client-server") / "races.db",
                            "--pool", "2", "--pool-seconds", "1", prelude=ANALYSES)


# Package scope, not session: Playwright's sync API keeps an event loop running in this thread
# for as long as it is open, and the asyncio tests of the other packages need the thread free.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        # `make test` installs Chromium first and sets this: there, a missing browser is a
        # failure, not a quiet skip of every browser test.
        if os.environ.get("SOLRACE_REQUIRE_BROWSER"):
            pytest.fail(f"no Chromium at {CHROMIUM} (apt-get install chromium-headless-shell)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium-headless-shell)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def pages(browser: Any, server: str) -> Iterator[Pages]:
    """Opens pages in fresh contexts; fails the test on any JavaScript error in them."""
    p = Pages(browser, server)
    try:
        yield p
        assert p.errors == [], "JavaScript errors in the browser"
    finally:
        p.close()


@pytest.fixture
def new_bot(server: str) -> Iterator[Callable[[], Bot]]:
    """``new_bot()`` opens a protocol connection, closed after the test."""
    made: list[Bot] = []

    def make() -> Bot:
        made.append(Bot(server))
        return made[-1]

    yield make
    for b in made:
        b.close()
