"""Teaching the game: rules panels, pile names and Quadruple Canfield's suits and base rank on the
board, refused clicks and drags that say why (the server's reason, beside the pile), playable
cards marked on touch screens too, the dragged cards under the pointer, auto-move of safe cards
and the four-colour deck (both remembered)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tests.client.helpers import (
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    both_widths,
    create_race,
    join_as,
    own_legal,
    own_seq,
    race_with_bot,
    scotch_seed_with_foundation_moves,
    screenshot,
    settle,
    top_card,
    wait_seq,
)

NewBot = Callable[[], Bot]


def immovable_and_free(page: Any) -> tuple[str, str]:
    """A fan whose top card has no legal move, and another pile that is no legal target."""
    legal = own_legal(page)
    sources = {m.split(">")[0] for m in legal}
    cards = page.evaluate("window.solrace.session.model.own.board.piles")
    fans = [p["pile"] for p in cards if p["pile"].startswith("t") and p["cards"]]
    src = next(f for f in fans if f not in sources)
    dst = next(f for f in fans if f != src and f not in sources)
    return src, dst


def test_rules_are_one_click_away_on_the_home_and_race_pages(pages: Pages) -> None:
    home = pages.open("/")
    home.select_option("#game", "yukon")
    home.click("text=How to play")
    panel = home.locator('[data-rules="yukon"]')
    assert panel.get_attribute("open") is not None
    assert "only a King" in panel.inner_text()
    both_widths(home, "home-rules", full_page=True)
    created = create_race(pages.base, game="quadruple-canfield", players=2)
    race = pages.open(f"/race/{created['race']}")
    race.wait_for_selector('#rules[open] >> text=/f1–f4 clubs/')  # unfolded in the lobby
    both_widths(race, "lobby-rules")


def test_pile_names_and_the_quadruple_canfield_foundations(pages: Pages, new_bot: NewBot) -> None:
    page, _ = race_with_bot(pages, new_bot(), game="quadruple-canfield", seed="123456")
    names = page.eval_on_selector_all(
        '[data-board="own"] .pile-name', "els => els.map(e => e.textContent)")
    assert "t1" in names and "s" in names and "w" in names and "r" in names
    assert "f1 ♣" in names and "f5 ♠" in names and "f9 ♥" in names and "f16 ♦" in names
    assert page.locator('[data-board="own"] [data-pile="t3"] .pile-name').is_visible()
    # The base rank is read off the board: the first card of the non-empty foundation.
    piles = page.evaluate("window.solrace.session.model.own.board.piles")
    base = next(p["cards"][0][0] for p in piles if p["pile"].startswith("f") and p["cards"])
    shown = "10" if base == "T" else base
    assert page.locator(".base-rank").inner_text().startswith(f"Base rank {shown}:")
    empty_clubs = next(p["pile"] for p in piles if p["pile"] in ("f1", "f2", "f3", "f4")
                       and not p["cards"])
    mark = page.locator(f'[data-board="own"] [data-pile="{empty_clubs}"] .pile-mark')
    assert mark.inner_text() == f"{shown}♣"
    pile = page.locator(f'[data-board="own"] [data-pile="{empty_clubs}"]')
    label = pile.get_attribute("aria-label")
    assert f"({empty_clubs}), Clubs from" in label
    both_widths(page, "quadruple-canfield-labels")


def test_a_refused_click_or_drag_says_why_beside_the_pile(pages: Pages, new_bot: NewBot) -> None:
    page, _ = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    src, dst = immovable_and_free(page)
    # A card that cannot move: picked up all the same, with a note that it has no move now.
    top_card(page, src).click()
    page.wait_for_selector(f'.flash[data-for="{src}"] >> text=/No legal move for/')
    assert page.locator('[data-board="own"] .target').count() == 0
    # Trying it on a pile: the server's reason, beside that pile and in the live region.
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
    flash = page.locator(f'.flash[data-for="{dst}"]')
    flash.wait_for()
    reason = flash.inner_text()
    assert reason and "No legal move" not in reason
    assert page.locator(".move-msg").inner_text() == reason
    page.wait_for_selector(f'#announce-assertive >> text="Refused: {reason}"', state="attached")
    assert own_seq(page) == 0
    both_widths(page, "refused-click")
    # Dragging: the card follows the pointer at its own size; a refused drop says why too.
    box = top_card(page, src).bounding_box()
    target = page.locator(f'[data-board="own"] [data-pile="{dst}"]').bounding_box()
    assert box and target
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    mid = (box["x"] + target["x"]) / 2 + 20, (box["y"] + target["y"]) / 2 + 30
    page.mouse.move(*mid, steps=6)
    ghost = page.locator(".drag-ghost .card").first.bounding_box()
    assert ghost and abs(ghost["width"] - box["width"]) < 6  # the card's size (a little tilted)
    assert abs(ghost["height"] - box["height"]) < 6
    assert abs(ghost["x"] + ghost["width"] / 2 - mid[0]) < 6  # held where it was taken (tilted)
    assert page.locator(".drag-ghost .card .pip").count() == 1  # the card itself, face up
    screenshot(page, "drag-ghost-1280")
    page.mouse.move(target["x"] + 20, target["y"] + 20, steps=4)
    page.mouse.up()
    page.wait_for_selector(f'.flash[data-for="{dst}"]')
    assert page.locator(".drag-ghost").count() == 0
    assert own_seq(page) == 0
    # A legal drop still moves.
    move = next(m for m in own_legal(page) if ">t" in m and "/" not in m)
    a, b = move.split(">")
    top_card(page, a).drag_to(page.locator(f'[data-board="own"] [data-pile="{b}"]'))
    wait_seq(page, 1)


def test_playable_cards_are_marked_without_hover_on_a_touch_screen(
    pages: Pages, new_bot: NewBot
) -> None:
    page, _ = race_with_bot(pages, new_bot(), viewport=PHONE,
                            context={"has_touch": True, "is_mobile": True},
                            seed=str(scotch_seed_with_foundation_moves()))
    # The opponents' progress is in view above the board, without scrolling.
    chip = page.locator('.race-strip [data-chip="p2"]').bounding_box()
    assert chip and chip["y"] + chip["height"] <= PHONE["height"]
    assert chip["x"] + chip["width"] <= PHONE["width"]
    sources = {m.split(">")[0] for m in own_legal(page)}
    marked = page.eval_on_selector_all(
        '[data-board="own"] .card.movable',
        """els => els.map(e => [e.closest('[data-pile]').dataset.pile,
                                getComputedStyle(e, '::after').content])""")
    assert {p for p, _ in marked} == sources
    assert all(content != "none" for _, content in marked)
    # A tap selects, a second tap lets go, and nothing that looks like a selection stays.
    pile = sorted(sources)[0]
    top_card(page, pile).tap()
    page.wait_for_selector(f'[data-board="own"] [data-pile="{pile}"] .card.selected')
    top_card(page, pile).tap()
    page.wait_for_selector('[data-board="own"] .card.selected', state="detached")
    settle(page)
    shadow = top_card(page, pile).evaluate("e => getComputedStyle(e).boxShadow")
    assert "246, 201, 69" not in shadow  # the mouse's hover ring is not drawn on touch
    screenshot(page, "playable-marks-390")


def open_settings(page: Any) -> None:
    page.click(".settings-menu summary")
    page.wait_for_selector(".settings-list", state="visible")


def test_auto_move_and_four_colours_are_remembered(pages: Pages, new_bot: NewBot) -> None:
    seed = scotch_seed_with_foundation_moves(2)

    def choose(page: Any) -> None:
        default = "import('/static/storage.js').then(m => m.settings.get('autoMove'))"
        assert page.evaluate(default) is False
        open_settings(page)
        both_widths(page, "settings-menu")
        page.check("#setting-autoMove")
        page.check("#setting-fourColour")
        page.keyboard.press("Escape")

    page, _ = race_with_bot(pages, new_bot(), before_start=choose, seed=str(seed))
    # The Aces go home one by one, with no click, through the normal move path.
    page.wait_for_function(
        """window.solrace.session.model.own.progress.foundation >= 2
           && !window.solrace.session.inflight""",
        timeout=WAIT_MS)
    safe_left = page.evaluate("window.solrace.session.model.own.safe")
    assert safe_left == [] or page.evaluate("window.solrace.session.inflight") is not None
    assert own_seq(page) == page.evaluate("window.solrace.session.model.own.progress.foundation")
    assert page.evaluate("document.documentElement.classList.contains('four-colour')")
    # Read in one evaluation: the board may be redrawn between finding a card and reading it, and a
    # detached card has no computed colour.
    page.wait_for_function(
        """(() => { const e = document.querySelector('[data-board="own"] .card.suit-D');
                    return e && getComputedStyle(e).color === 'rgb(21, 101, 192)'; })()""",
        timeout=WAIT_MS)
    both_widths(page, "four-colour")
    page.reload()
    page.wait_for_selector('[data-board="own"] [data-card]')
    assert page.evaluate("document.documentElement.classList.contains('four-colour')")
    open_settings(page)
    assert page.is_checked("#setting-autoMove") and page.is_checked("#setting-fourColour")


def test_without_auto_move_nothing_moves_by_itself(pages: Pages, new_bot: NewBot) -> None:
    created = create_race(pages.base, players=1, seed=str(scotch_seed_with_foundation_moves(2)))
    page = pages.open(f"/race/{created['race']}")
    join_as(page, "Manual")
    new_bot().request({"type": "start", "race": created["race"], "token": created["host_token"]})
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    assert page.evaluate("window.solrace.session.model.own.safe").__len__() >= 2
    page.wait_for_timeout(800)
    assert own_seq(page) == 0


def double_tap(page: Any, x: float, y: float) -> None:
    """Two taps 100 ms apart by the events' own clocks: Chromium tells a double tap by the
    timestamps of the touches, and the time between two Playwright taps is however long a
    busy machine takes between two commands (more than the double-tap window, at times)."""
    cdp = page.context.new_cdp_session(page)
    start = time.time()
    for i, kind in enumerate(("touchStart", "touchEnd", "touchStart", "touchEnd")):
        points = [{"x": x, "y": y}] if kind == "touchStart" else []
        at = start + (i // 2) * 0.1 + (i % 2) * 0.03
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points, "timestamp": at})
    cdp.detach()


def test_help_fits_the_screen_and_each_game_has_its_own_rules(
    pages: Pages, new_bot: NewBot
) -> None:
    # The home page's rules: each game speaks of its own piles and moves only (Scotch and Yukon
    # have no stock), and of clicks and keys on a desktop.
    home = pages.open("/")
    home.wait_for_selector('[data-rules="scotch"]', state="attached")
    for game in ("scotch", "yukon", "quadruple-canfield"):
        home.evaluate("(g) => document.querySelector(`[data-rules='${g}']`).open = true", game)
        text = home.locator(f'[data-rules="{game}"]').inner_text()
        has_stock = game == "quadruple-canfield"
        for word in ("stock", "s>w", "w>s", "waste"):
            assert (word in text) == has_stock, f"{game}: {word!r}"
        assert ("/3" in text) == (game != "scotch"), game  # Scotch moves one card at a time
        assert "Tab to the board" in text and "Tap a card" not in text
    # A phone: tap, drag and tap twice; no double-click and no Tab key, under the board as in
    # the rules.
    page, _ = race_with_bot(pages, new_bot(), viewport=PHONE,
                            context={"has_touch": True, "is_mobile": True},
                            seed=str(scotch_seed_with_foundation_moves()))
    page.locator("#race-rules summary").click()
    for where in (".play-panel", "#race-rules"):
        text = page.locator(where).inner_text()
        assert "Tap a card" in text and "twice" in text, where
        for word in ("click", "Click", "Tab", "Enter"):
            assert word not in text, f"{where}: {word!r}"
    screenshot(page, "help-touch-390", full_page=True)
    # That tap twice does what it says: a card with a foundation move goes home.
    page.evaluate("window.scrollTo(0, 0)")
    move = next(m for m in own_legal(page) if ">f" in m and "/" not in m)
    box = top_card(page, move.split(">")[0]).bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    double_tap(page, x, y)
    wait_seq(page, 1)
    assert page.locator('[data-board="own"] .pile-f [data-card]').count() == 1
