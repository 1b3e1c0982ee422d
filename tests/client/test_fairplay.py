"""Fair play in the browser: an account plays today's deal at machine speed (the solver's line
from what the board shows, every move sent at once); the day's table lists the result flagged,
with no place; a moderator (made with ``solrace mod add``) sees it on /mod with its signals and
clears it; the table then gives it its place."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import solrules

from tests.client.conftest import server_env, start_server
from tests.client.helpers import REPO, WAIT_MS, Pages, both_widths


@pytest.fixture
def fair_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server of its own (its moderator is made on its database) with winnable deals."""
    db = tmp_path / "races.db"
    gen = start_server(db, "--pool", "2", "--pool-seconds", "1")
    base = next(gen)
    yield base, db
    gen.close()


def account(page: Any, name: str) -> None:
    """Make the page's player an account: a name and a password."""
    page.wait_for_function("window.solrace?.me?.loaded")
    page.evaluate("async (n) => { await window.solrace.me.setName(n); "
                  "await window.solrace.me.setPassword('correct horse 42'); }", name)
    page.wait_for_function("window.solrace.me.player?.account === true")


def test_a_machine_speed_daily_result_is_flagged_then_cleared(
        browser: Any, fair_server: tuple[str, Path]) -> None:
    base, db = fair_server
    pages = Pages(browser, base)
    try:
        moderator = pages.open("/mod")
        account(moderator, "Moda")
        done = subprocess.run([sys.executable, "-m", "solrace", "mod", "add", "Moda", "--db",
                               str(db)], capture_output=True, text=True, cwd=REPO,
                              env=server_env(), timeout=WAIT_MS / 1000 * 3)
        assert done.returncode == 0, done.stderr
        cheat = pages.open("/daily/scotch")
        account(cheat, "Speedy")
        cheat.click("#play-daily")
        cheat.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
        cheat.wait_for_function("window.solrace.session?.model.own?.legal?.length > 0",
                                timeout=WAIT_MS * 2)
        # The scout's way: every card of a Scotch deal is face up, so the position on the page
        # is the whole deal; the solver wins it in a moment and the line is sent at once.
        board = cheat.evaluate("window.solrace.session.model.own.board")
        game = solrules.guess_game(board, random.Random(1))
        result = solrules.solve(game, solrules.Budget(nodes=400_000, seconds=20.0))
        assert result.verdict == "won", "the daily deal is a winnable one"
        cheat.evaluate("async (line) => { for (const m of line) "
                       "await window.solrace.session.move(m); }", list(result.line))
        cheat.wait_for_selector(".standings-table >> text=52 / 52", timeout=WAIT_MS)
        # The day's table: his result, flagged, no place.
        # The result is scored once the referee has the solver's line (at most
        # FAIRPLAY_LINE_WAIT, 8 s, on a busy machine): the table is read again until it is in.
        table = pages.open("/daily/scotch")
        flagged = '.day-table tr[data-flagged="true"] >> text=Speedy'
        deadline = time.monotonic() + WAIT_MS / 1000 * 3
        while table.locator(flagged).count() == 0 and time.monotonic() < deadline:
            table.wait_for_timeout(500)
            table.reload()
            table.wait_for_selector(".daily-table")
        table.wait_for_selector(flagged, timeout=WAIT_MS)
        assert "flagged" in table.locator('.day-table tr[data-flagged="true"]').inner_text()
        # The moderator's page lists it with its signals, and clears it.
        moderator.reload()
        row = moderator.locator(".mod-table tbody tr:not(.mod-replay)").first
        row.wait_for(timeout=WAIT_MS * 2)
        text = row.inner_text()
        assert "Speedy" in text and "machine speed" in text
        moderator.click(".mod-replay-btn")
        moderator.wait_for_selector('.mod-replay [data-replay="a"] [data-card]', timeout=WAIT_MS)
        both_widths(moderator, "mod-page", full_page=True)
        moderator.click(".mod-clear")
        moderator.wait_for_selector(".mod-empty", timeout=WAIT_MS)
        table.reload()
        table.wait_for_selector('.day-table tr:not([data-flagged="true"]) >> text=Speedy',
                                timeout=WAIT_MS)
        assert table.locator('.day-table tr[data-flagged="true"]').count() == 0
        assert "1st" in table.locator(".day-table tbody tr").first.inner_text()
        # Anyone else is told the page is not his.
        other = pages.open("/mod")
        other.wait_for_selector(".mod-refused >> text=/for moderators/", timeout=WAIT_MS)
        assert pages.errors == [], pages.errors
    finally:
        pages.close()
