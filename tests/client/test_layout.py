"""The race fits the window (issue 19): for each game at 1280x800 and on a phone (390x844) the
racer's board, Undo and Resign are in view without scrolling, Yukon's long columns close up, the
header and its clock stay in view when the page scrolls, Quadruple Canfield's foundation names do
not collide; spectators enlarge one board; a resigned racer's live standings are not cut off.
Contrast: test_contrast.py."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from tests.client.helpers import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    create_race,
    join_as,
    race_with_bot,
    screenshot,
    settle,
    wait_seq,
)

NewBot = Callable[[], Bot]

#: Yukon deal 40 and a line that piles 37 cards on column t7 (6 face down, 31 face up): deeper
#: than most games ever get.
YUKON_SEED = "40"
YUKON_LINE = ["t4>t7/4", "t2>t7/5", "t4>t6", "t5>t6/4", "t6>t5/6", "t6>t5", "t7>t4/4", "t4>t7/5",
              "t3>t6/2", "t3>t6/3", "t1>t6", "t7>t3", "t6>t7/2", "t6>t7/3", "t6>t7/4", "t5>t7",
              "t7>t2/13", "t2>t7/13", "t5>t7/7"]
GAMES = {"scotch": ("7", []), "yukon": (YUKON_SEED, YUKON_LINE),
         "quadruple-canfield": ("123456", [])}

BOX = "(s) => { const b = document.querySelector(s).getBoundingClientRect(); " \
      "return {x: b.left, y: b.top, right: b.right, bottom: b.bottom, height: b.height}; }"


def box(page: Any, selector: str) -> dict[str, float]:
    result: dict[str, float] = page.evaluate(BOX, selector)
    return result


def assert_in_view(page: Any, selector: str) -> None:
    size = page.viewport_size
    b = box(page, selector)
    assert b["height"] > 0, f"{selector} not shown"
    assert b["x"] >= 0 and b["right"] <= size["width"] + 0.5, f"{selector} beside the window: {b}"
    assert b["y"] >= 0 and b["bottom"] <= size["height"] + 0.5, f"{selector} out of view: {b}"


def play_line(page: Any, line: list[str]) -> None:
    for i, move in enumerate(line):
        page.evaluate("(m) => window.solrace.session.move(m)", move)
        wait_seq(page, i + 1)


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    apart_x = a["right"] <= b["x"] or b["right"] <= a["x"]
    apart_y = a["bottom"] <= b["y"] or b["bottom"] <= a["y"]
    return not (apart_x or apart_y)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
@pytest.mark.parametrize("game", list(GAMES))
def test_the_board_and_its_controls_fit_the_window(
    pages: Pages, new_bot: NewBot, game: str, viewport: dict[str, int]
) -> None:
    seed, line = GAMES[game]
    page, _ = race_with_bot(pages, new_bot(), viewport=viewport, game=game, seed=seed)
    play_line(page, line)
    settle(page)
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    for selector in ('[data-board="own"]', "#undo", "#resign", ".race-head .clock"):
        assert_in_view(page, selector)
    if game == "yukon":
        # The long column is there, whole, and its cards still show their index: each face-up
        # card shows a fifth of its height or more.
        tops = page.eval_on_selector_all(
            '[data-board="own"] [data-pile="t7"] .card',
            "els => els.map(e => [e.getBoundingClientRect().top, e.getBoundingClientRect().height,"
            " e.classList.contains('down')])")
        assert len(tops) == 37
        steps = [b[0] - a[0] for a, b in itertools.pairwise(tops) if not a[2]]
        assert min(steps) >= 0.19 * tops[0][1], steps
        assert tops[-1][0] + tops[-1][1] <= box(page, '[data-board="own"]')["bottom"]
    if game == "quadruple-canfield":
        names = page.eval_on_selector_all(
            '[data-board="own"] .pile-f .pile-name',
            "els => els.map(e => { const b = e.getBoundingClientRect(); "
            "return {text: e.textContent, x: b.left, y: b.top, right: b.right, "
            "bottom: b.bottom}; })")
        assert len(names) == 16
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert not overlaps(a, b), f"{a['text']} collides with {b['text']}"
    screenshot(page, f"layout-{game}-{viewport['width']}")
    # Scrolled to the end of the page (the help, the rules), the header and its clock stay.
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
    settle(page)
    assert_in_view(page, ".race-head .clock")
    assert_in_view(page, ".race-head .status-pill")
    screenshot(page, f"layout-{game}-{viewport['width']}-scrolled")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_spectator_enlarges_one_board(
    pages: Pages, new_bot: NewBot, viewport: dict[str, int]
) -> None:
    created = create_race(pages.base, game="yukon", players=4, seed=YUKON_SEED)
    race = created["race"]
    bots = [new_bot() for _ in range(4)]
    for name, b in zip(["Ada", "Brigitte", "Chidi", "Dmitri"], bots, strict=True):
        b.request({"type": "join", "race": race, "name": name})
    bots[0].request({"type": "start", "race": race, "token": created["host_token"]})
    for b in bots:
        b.play(race, 2)
    page = pages.open(f"/race/{race}/watch", viewport=viewport)
    page.wait_for_selector('[data-board="p3"] [data-card]')
    settle(page)
    small = box(page, '[data-board="p3"]')
    page.locator('[data-player="p3"] .enlarge').click()
    page.wait_for_selector('[data-player="p3"].large')
    settle(page)
    large = box(page, '[data-board="p3"]')
    if viewport == DESKTOP:  # (a phone shows every board across the screen already)
        assert large["right"] - large["x"] > 1.4 * (small["right"] - small["x"])
    assert_in_view(page, '[data-board="p3"]')
    assert page.locator('[data-board="p3"]').get_attribute("class").split().count("compact") == 0
    assert page.locator('[data-player="p3"] .enlarge').get_attribute("aria-pressed") == "true"
    assert page.locator(".player-card.large").count() == 1
    screenshot(page, f"watch-enlarged-{viewport['width']}")
    # Escape: every board small again, the focus back on the button.
    page.keyboard.press("Escape")
    page.wait_for_selector(".player-card.large", state="detached")
    assert "compact" in page.locator('[data-board="p3"]').get_attribute("class").split()
    assert page.evaluate("document.activeElement.closest('[data-player]')?.dataset.player") == "p3"
    # A click on a small board enlarges it; another click shows them all again.
    page.locator('[data-board="p2"]').click()
    page.wait_for_selector('[data-player="p2"].large')
    page.locator('[data-board="p2"]').click()
    page.wait_for_selector(".player-card.large", state="detached")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_resigned_racer_sees_all_the_live_standings(
    pages: Pages, new_bot: NewBot, viewport: dict[str, int]
) -> None:
    created = create_race(pages.base, players=3, seed="7", hints=True)
    race = created["race"]
    page = pages.open(f"/race/{race}", viewport=viewport)
    join_as(page, "Ann")
    others = [new_bot(), new_bot()]
    for name, b in zip(["Roberta Longname", "Zed"], others, strict=True):
        b.request({"type": "join", "race": race, "name": name})
    others[0].request({"type": "start", "race": race, "token": created["host_token"]})
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    others[0].play(race, 3)
    page.click("#resign")
    page.click("#resign")
    page.wait_for_selector(".done-panel .live-standings")
    settle(page)
    clip = page.evaluate("""() => { const s = document.querySelector('.done-panel .standings');
        return [s.scrollWidth, s.clientWidth]; }""")
    assert clip[0] <= clip[1], "the standings are wider than their panel"
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    # Every racer's status can be read, in its column or under the name.
    text = page.locator(".done-panel .live-standings").inner_text()
    assert "resigned" in text and text.count("racing") == 2
    page.locator(".done-panel").scroll_into_view_if_needed()
    screenshot(page, f"live-standings-resigned-{viewport['width']}")
