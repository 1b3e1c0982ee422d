"""The last one racing, in the browser (issue 29, item 5): a racer whose only opponent, a bot,
cleared the deal is told that the race ends if he makes no move for a while, and how long he
has left; a move gives him the whole time again; if he stays idle, the race ends there and the
results say why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import solrules

from tests.client.conftest import start_server
from tests.client.helpers import WAIT_MS, Bot, Pages, both_widths, create_race, join_as, own_legal

#: How long the last one racing may stay idle on this test's server (production: a minute).
IDLE_MS = 10_000


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    prelude = f"import solrace.settings as s; s.LAST_RACER_IDLE_MS = {IDLE_MS}"
    yield from start_server(tmp_path_factory.mktemp("last-racer") / "races.db", "--arenas",
                            "off", prelude=prelude)


@pytest.fixture
def pages(browser: Any, idle_server: str) -> Iterator[Pages]:
    p = Pages(browser, idle_server)
    try:
        yield p
        assert p.errors == [], "JavaScript errors in the browser"
    finally:
        p.close()


def test_the_last_one_racing_is_told_and_an_idle_one_ends_the_race(
        pages: Pages, idle_server: str) -> None:
    result = solrules.solve(solrules.new_game("scotch", 1),
                            solrules.Budget(nodes=200_000, seconds=20))
    assert result.verdict == "won"
    created = create_race(idle_server, players=2, seed="1")
    race = created["race"]
    page = pages.open(f"/race/{race}")
    join_as(page, "Ann")
    robo = Bot(idle_server)
    try:
        robo.request({"type": "join", "race": race, "name": "Robo", "bot": True})
        robo.request({"type": "start", "race": race, "token": created["host_token"]})
        page.wait_for_function("window.solrace.session.model.own?.legal?.length > 0",
                               timeout=WAIT_MS)
        robo.wait_state()
        for seq, move in enumerate(result.line, start=1):  # Robo clears the deal
            robo.request({"type": "move", "race": race, "move": move, "seq": seq})
    finally:
        robo.close()
    banner = page.wait_for_selector(".banner >> text=/You're the last one racing/", timeout=WAIT_MS)
    assert f"if you make no move for {IDLE_MS // 1000} s" in banner.inner_text()
    assert page.locator(".banner .last-left").inner_text().startswith("(0:")
    # A move gives him the whole time again: the countdown goes back up.
    left = page.evaluate("window.solrace.session.model.lastRacer.ends_at")
    page.evaluate("(m) => window.solrace.session.move(m)", own_legal(page)[0])
    page.wait_for_function(f"window.solrace.session.model.lastRacer.ends_at > {left}",
                           timeout=WAIT_MS)
    both_widths(page, "last-racer")
    # He stays idle: the race ends there, and the results say why.
    page.wait_for_selector(".over-reason >> text=/the last one racing stopped making moves/",
                           timeout=WAIT_MS * 2)
    assert page.locator(".results .standings-table tbody tr").first.inner_text().find("Robo") >= 0

