"""Accessibility: every board is a named region; the racer's board is one stop in the tab order
with the arrow keys inside (roving focus); a focused target has a ring that stands out; the live
regions announce refusals and places."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import solrules

from tests.client.helpers import (
    Bot,
    Pages,
    both_widths,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
    wait_seq,
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


# Groups of keys sent in one task of the page, the board read after each group: no timer can
# run in between, so what it says does not depend on how fast the machine is.
TYPE_AT_ONCE = """(groups) => groups.map((keys) => {
  for (const key of keys) {
    document.activeElement.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
  }
  const note = document.querySelector('[data-board="own"] .typed-name');
  return {typed: note?.isConnected ? note.textContent : "",
          focused: document.activeElement.dataset?.pile ?? null};
})"""


def wait_focused(page: Any, pile: str) -> None:
    page.wait_for_function("(p) => document.activeElement?.dataset?.pile === p", arg=pile)


def test_pile_names_are_read_whole(pages: Pages, new_bot: NewBot) -> None:
    """Typed pile names are never read greedily: "t1" waits while t10–t18 may follow, and the
    next letter, Enter or a pause takes it as it is (issue 29, item 5)."""
    # Scotch, deal 2: t1>t18 is legal at once. Typed in one go, "t1t18" plays it: the "t"
    # ends the name "t1" (it once dropped it, and "t18" alone picked that fan up).
    assert "t1>t18" in [m.text() for m in solrules.new_game("scotch", 2).legal_moves()]
    page, _ = race_with_bot(pages, new_bot(), seed="2")
    page.locator('[data-board="own"] [data-pile][tabindex="0"]').focus()
    page.keyboard.type("t1t18")
    wait_seq(page, 1)
    # What is typed shows beside the first pile it may name ("t" waits for its number).
    assert page.evaluate(TYPE_AT_ONCE, [["t"]]) == [{"typed": "t", "focused": "t18"}]
    both_widths(page, "keyboard-typed-name")
    # "t1" waits (t10–t18 may follow); Enter takes it at once.
    assert page.evaluate(TYPE_AT_ONCE, [["1"], ["Enter"]]) == [
        {"typed": "t1", "focused": "t18"}, {"typed": "", "focused": "t1"}]
    page.wait_for_selector('[data-board="own"] [data-pile="t1"].source')
    page.keyboard.press("Escape")
    # A name no pile has is said, not taken for its prefix.
    assert page.evaluate(TYPE_AT_ONCE, [["t", "1", "9"]]) == [{"typed": "", "focused": "t1"}]
    page.wait_for_selector('#announce-assertive >> text="No pile t19."', state="attached")

    # Quadruple Canfield, deal 13: f1 holds the base card, f1>t3 is legal; f10–f16 exist.
    qc_legal = [m.text() for m in solrules.new_game("quadruple-canfield", 13).legal_moves()]
    assert "f1>t3" in qc_legal
    page, _ = race_with_bot(pages, new_bot(), game="quadruple-canfield", seed="13")
    page.locator('[data-board="own"] [data-pile][tabindex="0"]').focus()
    page.keyboard.type("f1t3")
    wait_seq(page, 1)
    # "f1" waits; a 6 makes it f16, taken at once; Escape drops a name being typed.
    assert page.evaluate(TYPE_AT_ONCE, [["f", "1"], ["6"], ["f", "1", "Escape"]]) == [
        {"typed": "f1", "focused": "t3"}, {"typed": "", "focused": "f16"},
        {"typed": "", "focused": "f16"}]
    # A pause takes a name as it is.
    assert page.evaluate(TYPE_AT_ONCE, [["f", "1"]]) == [{"typed": "f1", "focused": "f16"}]
    wait_focused(page, "f1")
    assert page.locator('[data-board="own"] .typed-name').count() == 0
