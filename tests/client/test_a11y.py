"""Accessibility: every board is a named region; the racer's board is one stop in the tab order
with the arrow keys inside (roving focus); a focused target has a ring that stands out; the live
regions announce refusals and places."""

from __future__ import annotations

from collections.abc import Callable

from tests.client.helpers import (
    Bot,
    Pages,
    both_widths,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
)

NewBot = Callable[[], Bot]


def test_boards_are_named_regions_with_one_tab_stop(pages: Pages, new_bot: NewBot) -> None:
    page, _ = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    page.wait_for_selector('[data-board="p2"] [data-card]')
    regions = page.eval_on_selector_all(
        "[data-board]",
        "els => els.map(e => [e.getAttribute('role'), e.getAttribute('aria-label')])")
    assert ["region", "Your board"] in regions
    assert ["region", "Robo's board"] in regions
    assert all(role == "region" and label for role, label in regions)
    # One tab stop: Tab from the undo button's side lands on one pile, the next Tab leaves.
    assert page.locator('[data-board="own"] [data-pile][tabindex="0"]').count() == 1
    page.locator('[data-board="own"] [data-pile][tabindex="0"]').focus()
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.dataset.pile")
    assert focused and focused != "t1"
    stop = page.locator('[data-board="own"] [data-pile][tabindex="0"]')
    assert stop.get_attribute("data-pile") == focused
    page.keyboard.press("Tab")
    assert page.evaluate("!document.activeElement.closest('[data-board]')")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.dataset.pile") == focused  # back where it was
    # Keyboard move to a focused target: its focus ring is thick and not the targets' green.
    move = next(m for m in own_legal(page) if "/" not in m)
    src, dst = move.split(">")
    page.locator(f'[data-board="own"] [data-pile="{src}"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(f'[data-board="own"] [data-pile="{dst}"].target')
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').focus()
    ring = page.evaluate(
        """(pile) => { const s = getComputedStyle(document.querySelector(
             `[data-board="own"] [data-pile="${pile}"]`));
             return [s.outlineStyle, s.outlineWidth, s.outlineColor]; }""", dst)
    assert ring[0] == "solid" and float(ring[1].rstrip("px")) >= 3
    assert ring[2] == "rgb(255, 255, 255)"
    page.wait_for_selector("#announce-assertive >> text=/^Selected /", state="attached")
    both_widths(page, "keyboard-focus-target")
    page.keyboard.press("Enter")
    page.wait_for_function("window.solrace.session.model.own.seq === 1")
    # A refusal is announced at once (assertive); places politely.
    page.fill("#move-input", "t1>t1")
    page.press("#move-input", "Enter")
    page.wait_for_selector("#announce-assertive >> text=/^Refused: /", state="attached")
    page.evaluate("""() => window.solrace.session.dispatchEvent(new CustomEvent("finisher",
        {detail: {player: "p2", name: "Robo", place: 1, time_ms: 61000}}))""")
    page.wait_for_selector('#announce-polite >> text="Robo finished 1st in 1:01.0"',
                           state="attached")
