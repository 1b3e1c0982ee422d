"""Every text of the home, arena, race (lobby, running, resigned, results) and spectator pages
(enlarged board included) has a WCAG AA contrast, at 1280x800 and on a phone (issue 19). Its own
file: the suite runs a file on one worker, and these are the longest browser tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.client.contrast import whole_page_failures
from tests.client.helpers import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    create_race,
    join_as,
    screenshot,
    settle,
)

NewBot = Callable[[], Bot]


def assert_contrast(page: Any, name: str) -> None:
    settle(page)
    bad = whole_page_failures(page)
    screenshot(page, f"contrast-{name}")
    assert not bad, f"{name}: text below WCAG AA contrast: {bad}"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_every_text_has_enough_contrast(
    pages: Pages, new_bot: NewBot, viewport: dict[str, int]
) -> None:
    home = pages.open("/", viewport=viewport)
    home.wait_for_selector("text=Create race")
    assert_contrast(home, f"home-{viewport['width']}")
    # An arena of the house's schedule (the test server keeps it), as a visitor sees it.
    home.wait_for_function("fetch('/api/arenas').then(r => r.json()).then(a => a.length > 0)")
    arena = home.evaluate("fetch('/api/arenas').then(r => r.json()).then(a => a[0].arena)")
    page = pages.open(f"/arena/{arena}", viewport=viewport)
    page.wait_for_selector("#arena-join >> text=Join the arena")
    assert_contrast(page, f"arena-{viewport['width']}")
    # A Quadruple Canfield race with the four-colour deck (its foundations' marks in colour), a
    # Yukon race (face-down cards on the others' boards, and the note about them).
    for game in ("quadruple-canfield", "yukon"):
        created = create_race(pages.base, game=game, players=3, seed="123456", hints=True)
        race = created["race"]
        page = pages.open(f"/race/{race}", viewport=viewport)
        join_as(page, "Ann")
        page.evaluate("import('/static/storage.js').then(m => m.settings.set('fourColour', true))")
        assert_contrast(page, f"lobby-{game}-{viewport['width']}")
        bot, human = new_bot(), new_bot()
        bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
        human.request({"type": "join", "race": race, "name": "Zed"})
        bot.request({"type": "start", "race": race, "token": created["host_token"]})
        page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
        bot.play(race, 3)
        watch = pages.open(f"/race/{race}/watch", viewport=viewport)
        watch.wait_for_selector('[data-board="p2"] [data-card]')
        page.wait_for_selector('[data-player="p2"] .player-meta >> text=3 moves')
        assert_contrast(page, f"race-{game}-{viewport['width']}")
        assert_contrast(watch, f"watch-{game}-{viewport['width']}")
        watch.locator('[data-player="p2"] .enlarge').click()
        assert_contrast(watch, f"watch-enlarged-{game}-{viewport['width']}")
        page.click("#resign")
        page.click("#resign")
        page.wait_for_selector(".done-panel .live-standings")
        assert_contrast(page, f"resigned-{game}-{viewport['width']}")
        human.request({"type": "resign", "race": race})
        page.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
        page.wait_for_selector('[data-replay="b"] [data-card]')
        assert_contrast(page, f"results-{game}-{viewport['width']}")


def test_the_check_finds_faint_text(pages: Pages) -> None:
    """The measure itself: grey on grey fails, text faded by an ancestor's opacity fails, black
    on white passes (what the page's own styles would paint is out of the way: a blank page)."""
    page = pages.open("/")
    page.goto("about:blank")
    page.set_content("""<body style="margin:0;background:#fff;font:16px sans-serif">
      <p id="grey" style="color:#777;background:#888">grey on grey</p>
      <div style="opacity:.3"><p>faded by its parent</p></div>
      <p>plain black on white</p></body>""")
    bad = {r["text"] for r in whole_page_failures(page)}
    assert bad == {"grey on grey", "faded by its parent"}
