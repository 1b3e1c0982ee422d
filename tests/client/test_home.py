"""Home, results and replay: public races listed on the home page (private ones not), one-click
join from the list, this browser's races with status and place, and the replay by race time
with each move in words."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from tests.client.helpers import (
    WAIT_MS,
    Bot,
    Pages,
    both_widths,
    create_race,
    join_as,
    one_card_moves,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
    top_card,
    wait_seq,
)

NewBot = Callable[[], Bot]


def test_open_public_races_and_your_races(pages: Pages, new_bot: NewBot) -> None:
    private = create_race(pages.base, players=2)["race"]
    host = pages.open("/")
    assert not host.is_checked("#public")  # private unless the host says otherwise
    host.check("#public")
    host.click("text=Create race")
    host.wait_for_selector("#start")
    race = host.url.rstrip("/").rsplit("/", 1)[1]
    # Another browser sees it under "Open races" (the private one is not there) and joins it.
    guest = pages.open("/")
    row = guest.locator(f'.open-races-list [data-race="{race}"]')
    row.wait_for()
    assert "Scotch Patience" in row.inner_text() and "0/2 racers" in row.inner_text()
    assert guest.locator(f'.open-races-list [data-race="{private}"]').count() == 0
    both_widths(guest, "home-open-races", full_page=True)
    row.locator("button >> text=Join").click()
    guest.wait_for_url(f"**/race/{race}")
    join_as(guest, "Bea")
    host.wait_for_selector(".lobby-list >> text=Bea")
    host.click("#start")
    guest.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    guest.click("#resign")
    guest.click("#resign")
    guest.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    # Back home: the race is no longer open, and "Your races" has it with the place.
    guest.click(".results a.go-home")
    mine = guest.locator(f'.your-races-list [data-race="{race}"] .race-status')
    mine.wait_for()
    guest.wait_for_function(
        "(race) => document.querySelector(`.your-races-list [data-race='${race}'] .race-status`)"
        ".textContent.includes('1st of 1')", arg=race)
    assert guest.locator(f'.open-races-list [data-race="{race}"]').count() == 0
    both_widths(guest, "home-your-races", full_page=True)


def test_replay_by_race_time_with_moves_in_words(pages: Pages, new_bot: NewBot) -> None:
    bot = new_bot()
    page, race = race_with_bot(pages, bot, seed=str(scotch_seed_with_foundation_moves()))
    bot.play(race, 1)  # the bot moves first...
    time.sleep(0.4)
    move = one_card_moves(own_legal(page))[0]  # ...then the racer...
    src, dst = move.split(">")
    top_card(page, src).click()
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
    wait_seq(page, 1)
    time.sleep(0.4)
    bot.play(race, 1)  # ...then the bot again
    bot.request({"type": "resign", "race": race})  # a race of two: it ends
    page.wait_for_selector('[data-replay="b"] [data-card]', timeout=WAIT_MS)
    side_a = page.locator('[data-replay="a"]').locator("xpath=..")
    side_b = page.locator('[data-replay="b"]').locator("xpath=..")
    # Step by step through the race's moments: each board as it stood at that race time.
    page.click('button[aria-label="Next move"]')
    page.wait_for_selector(".step-text >> text=/^0:0\\d\\.\\d · 1 \\/ 3$/")
    assert side_a.locator(".replay-move").inner_text().startswith("Deal")
    assert side_b.locator(".replay-move").inner_text().startswith("1/2:")
    words = side_b.locator(".replay-words").inner_text()
    assert re.fullmatch(r"\S+ from fan \d+ to (a foundation|fan \d+)", words), words
    page.click('button[aria-label="Next move"]')
    assert side_a.locator(".replay-move").inner_text() == f"1/1: {move}"
    assert side_b.locator(".replay-move").inner_text().startswith("1/2:")
    assert f"from fan {src[1:]} to" in side_a.locator(".replay-words").inner_text()
    page.click('button[aria-label="Next move"]')
    assert side_b.locator(".replay-move").inner_text().startswith("2/2:")
    both_widths(page, "replay-race-time", full_page=True)
    # Play runs in race time to the end.
    page.click('button[aria-label="First position"]')
    page.click("#replay-play")
    page.wait_for_selector("#replay-play >> text=Play", timeout=WAIT_MS)
    assert page.locator("#replay-step").input_value() == "3"
