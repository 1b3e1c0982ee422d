"""Your race: the finishing moment, live standings and the other boards while the race goes on,
rematch (asked by one racer, offered to the other in one click), a low-time warning and sounds,
"Spectate" in a new tab, "offline" said once, "Start race" with nobody in says why, and a race
that every racer left ends and says so."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.client.conftest import start_server
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
    record_toasts,
    scotch_seed_with_foundation_moves,
    solvable_scotch,
    top_card,
    wait_seq,
    wait_toast,
)

NewBot = Callable[[], Bot]


def test_finishing_then_live_standings_then_rematch(pages: Pages, new_bot: NewBot) -> None:
    seed, line = solvable_scotch()
    created = create_race(pages.base, players=2, seed=str(seed))
    race = created["race"]
    winner = pages.open(f"/race/{race}")
    join_as(winner, "Winnie")
    loser = pages.open(f"/race/{race}")
    join_as(loser, "Lou")
    new_bot().request({"type": "start", "race": race, "token": created["host_token"]})
    winner.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    loser.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    record_toasts(loser)
    winner.evaluate(
        "async (line) => { for (const m of line) await window.solrace.session.move(m); }", line)
    # The moment: place, time, a short animation over the board.
    winner.wait_for_selector(".finish-moment .finish-place >> text=1st")
    assert "Deal cleared in" in winner.locator(".finish-time").inner_text()
    assert winner.locator(".finish-moment .confetti").count() > 0
    both_widths(winner, "finish-moment")
    winner.wait_for_selector("#announce-polite >> text=/You finished 1st/", state="attached")
    # Then the race goes on: standings, the other boards, and what to do next.
    # It goes by itself after a few seconds (a loaded machine may have taken them already),
    # or at a click.
    winner.evaluate("document.querySelector('.finish-moment')?.click()")
    winner.wait_for_selector(".finish-moment", state="detached", timeout=WAIT_MS)
    winner.wait_for_selector(".banner-good >> text=/You finished 1st in/")
    winner.wait_for_selector(".done-panel >> text=Live standings")
    rows = winner.locator(".live-standings tbody tr")
    assert rows.count() == 2 and "racing" in rows.nth(1).inner_text()
    assert winner.locator('.opponents [data-board="p2"] [data-card]').count() > 0
    assert winner.locator(".done-panel .rematch").is_disabled()  # once the race is over
    assert winner.locator(".done-panel .watch-live").is_visible()
    assert winner.locator(".done-panel .go-home").is_visible()
    both_widths(winner, "finished-race-goes-on", full_page=True)
    wait_toast(loser, "Winnie finished 1st")
    loser.click("#resign")
    loser.click("#resign")
    # A resign is a loss, and the results say so in words.
    loser.wait_for_selector('.you-outcome[data-outcome="resigned"] >> text=Lost (resigned)',
                            timeout=WAIT_MS)
    assert "lost (resigned)" in loser.locator(".standings-table tr.is-you").inner_text()
    winner.wait_for_selector('.you-outcome[data-outcome="won"] >> text=Won', timeout=WAIT_MS)
    # Over: Winnie asks for a rematch and lands in the new race, joined.
    winner.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    winner.click(".results .rematch")
    winner.wait_for_selector("text=You're in, Winnie.")
    assert race not in winner.url
    # Lou is offered it in one click.
    loser.wait_for_selector(".rematch-offer >> text=/Winnie asked for a rematch/")
    both_widths(loser, "rematch-offer")
    loser.click("#join-rematch")
    loser.wait_for_selector("text=You're in, Lou.")
    assert loser.url == winner.url
    winner.wait_for_selector(".lobby-list >> text=Lou")


def test_low_time_sounds_spectate_and_offline(pages: Pages, new_bot: NewBot) -> None:
    bot = new_bot()

    def sound_on(page: Any) -> None:
        page.click(".settings-menu summary")
        page.check("#setting-sound")
        page.keyboard.press("Escape")

    page, race = race_with_bot(pages, bot, before_start=sound_on, time_limit=32,
                               seed=str(scotch_seed_with_foundation_moves()))
    # The last 30 seconds: the clock turns red, a sound and the live region say so.
    page.wait_for_selector(".race-head.low-time", timeout=WAIT_MS)
    page.wait_for_selector('#announce-assertive >> text="30 seconds left"', state="attached")
    assert page.locator("#sound").get_attribute("aria-pressed") == "true"  # the same switch
    both_widths(page, "low-time")
    move = one_card_moves(own_legal(page))[0]
    src, dst = move.split(">")
    top_card(page, src).click()
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
    wait_seq(page, 1)
    page.fill("#move-input", "t1>t1")
    page.press("#move-input", "Enter")
    page.wait_for_selector(".move-msg:not(:empty)")
    played = page.evaluate("import('/static/sounds.js').then(m => [...m.played])")
    for name in ("tick", "go", "lowtime", "refused"):
        assert name in played, played
    assert "move" in played or "home" in played
    # Spectate opens the spectator view in a new tab; the race page stays.
    with page.context.expect_page() as opened:
        page.click("#spectate")
    spectator = opened.value
    spectator.wait_for_url("**/watch")
    spectator.wait_for_selector('[data-board="p1"] [data-card]')
    assert page.url.endswith(f"/race/{race}")
    spectator.close()
    # An opponent who leaves is "offline", said once.
    bot.close()
    card = page.locator('[data-player="p2"]')
    card.locator(".player-badge >> text=offline").wait_for()
    assert card.inner_text().lower().count("offline") == 1
    page.click("#resign")
    page.click("#resign")


def test_start_with_nobody_in_says_why(pages: Pages) -> None:
    home = pages.open("/")
    home.select_option("#game", "scotch")
    home.click("text=Create race")
    home.wait_for_selector("#start")
    home.click("#start")
    msg = home.locator(".lobby-msg")
    msg.wait_for()
    assert "nobody has joined" in msg.inner_text()
    both_widths(home, "start-nobody")


def status_of(base: str, race: str) -> str:
    with urllib.request.urlopen(f"{base}/api/races/{race}") as res:
        return str(json.load(res)["status"])


def test_a_race_every_racer_left_ends_and_says_why(browser: Any, tmp_path: Path) -> None:
    # The server's two minutes, shortened to two seconds for the test.
    serving = start_server(tmp_path / "races.db", "--abandon-after", "2")
    base = next(serving)
    pages = Pages(browser, base)
    bot = Bot(base)
    try:
        page, race = race_with_bot(pages, bot, seed="7")
        bot.close()
        page.goto("about:blank")  # the racer closes the tab
        deadline = time.monotonic() + WAIT_MS / 1000 * 2
        while status_of(base, race) != "finished":
            assert time.monotonic() < deadline, "the race did not end"
            time.sleep(0.2)
        page.goto(f"{base}/race/{race}")
        reason = page.locator(".over-reason")
        reason.wait_for()
        assert "offline for two minutes" in reason.inner_text()
        assert "left" in page.locator(".standings-table tbody").inner_text()
        both_widths(page, "abandoned-race", full_page=True)
        assert pages.errors == [], "JavaScript errors in the browser"
    finally:
        bot.close()
        pages.close()
        serving.close()
