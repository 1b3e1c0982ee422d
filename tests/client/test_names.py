"""Racers' names are never cut short (issue 29, item 5): the house bots' names ("Steady bot",
"Steady bot 2": the distinguishing part is at the end) and their labels are whole on a phone
(390 px) and in the narrow columns of a wide screen: the race page's opponents and standings
strip, the spectator's boards, the results, the tournament's table and round list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.client.helpers import DESKTOP, PHONE, WAIT_MS, Bot, Pages, both_widths, settle
from tests.client.test_tournament import join_tournament, race_dealt

NewBot = Callable[[], Bot]

#: Where a name is drawn: a racer's name (an opponent's card, a table's row), a strip's chip, a
#: tournament's entrant, the round list.
NAMES = ":is(.player-link, .racer-plain), .chip-name, .entrant-name, .race-place"

#: Every name shown on the page, with whether its text is cut: by its own box or by a box
#: around it that hides what overflows (a box that scrolls, as the phone's strip, does not hide
#: it), or by the window's edge.
CUT_NAMES = """(selector) => [...document.querySelectorAll(selector)]
  .filter((el) => el.getClientRects().length)
  .map((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const text = range.getBoundingClientRect();
    let cut = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible";
    let scrolls = false;
    for (let box = el; box && !cut; box = box.parentElement) {
      const overflow = getComputedStyle(box).overflowX;
      if (overflow === "auto" || overflow === "scroll") scrolls = true;
      if (overflow !== "hidden" && overflow !== "clip") continue;
      const b = box.getBoundingClientRect();
      cut = text.left < b.left - 1 || text.right > b.right + 1;
    }
    if (!scrolls && text.right > document.documentElement.clientWidth + 1) cut = true;
    return {name: el.textContent, cut};
  })"""

BOTS = ["Random bot", "Greedy bot", "Steady bot", "Steady bot 2"]


def names_whole(page: Any, where: str) -> list[str]:
    """The names shown on ``page`` at both widths, each checked whole; the texts seen."""
    seen: list[str] = []
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        settle(page)
        shown = page.evaluate(CUT_NAMES, NAMES)
        cut = [s["name"] for s in shown if s["cut"]]
        assert not cut, f"{where} at {size['width']} px cuts {cut}"
        seen += [s["name"] for s in shown]
    return seen


def test_bot_names_are_whole_in_narrow_columns(pages: Pages, new_bot: NewBot) -> None:
    admin = new_bot()
    created = admin.request({"type": "tournament_create", "name": "House Cup", "format": "rounds",
                             "games": ["scotch"], "rounds": 1, "race_size": 8, "gap": 0,
                             "grace": 30})
    tid, token = created["tournament"], created["host_token"]
    ann = pages.open(f"/tournament/{tid}", viewport=PHONE)
    join_tournament(ann, "Ann")
    for level in (1, 2, 3, 3):
        admin.request({"type": "tournament_add_bot", "tournament": tid, "token": token,
                       "level": level})
    ann.wait_for_selector(".entrant-list >> text=Steady bot 2")
    admin.request({"type": "tournament_start", "tournament": tid, "token": token})
    race_dealt(ann)
    race = ann.url.rsplit("/", 1)[1]
    ann.wait_for_selector('.race-strip [data-chip] >> text="Steady bot 2"', state="attached")
    # The race page: the strip's chips (a phone) and the opponents' cards.
    seen = names_whole(ann, "the race page")
    assert all(name in seen for name in BOTS), seen
    both_widths(ann, "names-race")
    # The spectator's boards.
    watcher = pages.open(f"/race/{race}/watch", viewport=PHONE)
    watcher.wait_for_selector('[data-player] .player-name >> text="Steady bot 2"')
    seen = names_whole(watcher, "the spectator page")
    assert all(name in seen for name in BOTS), seen
    # The results, once the only human resigns (the bots stop where they stand).
    ann.click("#resign")
    ann.click("#resign")
    ann.wait_for_selector('.results .standings-table >> text="Steady bot 2"', timeout=WAIT_MS)
    seen = names_whole(ann, "the results")
    assert all(name in seen for name in BOTS), seen
    # The tournament's table and round list.
    ann.goto(f"{pages.base}/tournament/{tid}")
    ann.wait_for_selector(".round-card .race-place >> text=/ Steady bot 2$/", timeout=WAIT_MS)
    seen = names_whole(ann, "the tournament page")
    assert all(name in seen for name in BOTS), seen
    both_widths(ann, "names-tournament", full_page=True)
