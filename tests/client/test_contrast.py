"""Every text of the home, arena, race (lobby, running, resigned, results) and spectator pages
(enlarged board included) has a WCAG AA contrast, at 1280x800 and on a phone (issue 19). One walk
through the pages, each state measured at both widths (the page resized, as a phone turned or a
window narrowed: the layout follows the width, not how the page was opened): the walk is set up
once, not once per width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    """Every text of ``page`` as it is now, at 1280 px and at a phone's width (screenshots
    ``contrast-{name}-1280`` and ``-390``), has enough contrast; the page is left at 1280 px."""
    bad: dict[str, list[dict[str, Any]]] = {}
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        settle(page)
        label = f"{name}-{size['width']}"
        bad[label] = whole_page_failures(page)
        screenshot(page, f"contrast-{label}")
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"text below WCAG AA contrast: {bad}"


def test_every_text_has_enough_contrast(pages: Pages, new_bot: NewBot) -> None:
    home = pages.open("/", viewport=DESKTOP)
    home.wait_for_selector("text=Create race")
    assert_contrast(home, "home")
    # An arena of the house's schedule (the test server keeps it), as a visitor sees it.
    home.wait_for_function("fetch('/api/arenas').then(r => r.json()).then(a => a.length > 0)")
    arena = home.evaluate("fetch('/api/arenas').then(r => r.json()).then(a => a[0].arena)")
    page = pages.open(f"/arena/{arena}", viewport=DESKTOP)
    page.wait_for_selector("#arena-join >> text=Join the arena")
    assert_contrast(page, "arena")
    # A Quadruple Canfield race with the four-colour deck (its foundations' marks in colour), a
    # Yukon race (face-down cards on the others' boards, and the note about them).
    for game in ("quadruple-canfield", "yukon"):
        created = create_race(pages.base, game=game, players=3, seed="123456", hints=True)
        race = created["race"]
        page = pages.open(f"/race/{race}", viewport=DESKTOP)
        join_as(page, "Ann")
        page.evaluate("import('/static/storage.js').then(m => m.settings.set('fourColour', true))")
        assert_contrast(page, f"lobby-{game}")
        bot, human = new_bot(), new_bot()
        bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
        human.request({"type": "join", "race": race, "name": "Zed"})
        bot.request({"type": "start", "race": race, "token": created["host_token"]})
        page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
        bot.play(race, 3)
        watch = pages.open(f"/race/{race}/watch", viewport=DESKTOP)
        watch.wait_for_selector('[data-board="p2"] [data-card]')
        page.wait_for_selector('[data-player="p2"] .player-meta >> text=3 moves')
        assert_contrast(page, f"race-{game}")
        assert_contrast(watch, f"watch-{game}")
        watch.locator('[data-player="p2"] .enlarge').click()
        assert_contrast(watch, f"watch-enlarged-{game}")
        page.click("#resign")
        page.click("#resign")
        page.wait_for_selector(".done-panel .live-standings")
        assert_contrast(page, f"resigned-{game}")
        human.request({"type": "resign", "race": race})
        page.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
        page.wait_for_selector('[data-replay="b"] [data-card]')
        assert_contrast(page, f"results-{game}")


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
