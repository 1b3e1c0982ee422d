"""The client keeps to its Content-Security-Policy (own scripts, styles and socket only): a whole
race, from the home page to the results, with the policy enforced and no violation; and a race
whose creator chose the deal says so on every page."""

from __future__ import annotations

from collections.abc import Callable

from tests.client.helpers import WAIT_MS, Bot, Pages, screenshot

NewBot = Callable[[], Bot]


def test_a_race_under_the_pages_security_policy(pages: Pages, server: str, new_bot: NewBot) -> None:
    home = pages.open("/", csp=True)
    home.select_option("#game", "scotch")
    home.fill("#racers", "2")
    home.click("text=Choose the deal")
    home.fill("#seed", "617")
    home.click("text=Create race")
    home.wait_for_selector("#racer-name", timeout=WAIT_MS)
    race = home.url.rsplit("/", 1)[1]
    home.fill("#racer-name", "Cleo")
    home.click("text=Join race")
    home.wait_for_selector("text=You're in, Cleo.")
    note = home.locator('[data-note="seed-chosen"]')
    assert note.is_visible() and "chosen by the host" in note.inner_text()
    watcher = pages.open(f"/race/{race}/watch", csp=True)
    watcher.wait_for_selector('[data-note="seed-chosen"]')
    bot = new_bot()
    bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
    home.click("#ready")
    bot.request({"type": "ready", "race": race})
    home.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    legal = bot.wait_state()["legal"]
    bot.request({"type": "move", "race": race, "move": legal[0], "seq": 1})
    watcher.wait_for_selector('[data-board="p1"] [data-card]', timeout=WAIT_MS)
    bot.request({"type": "resign", "race": race})  # a race of two: it ends
    home.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    assert home.locator('.results [data-note="seed-chosen"]').is_visible()
    screenshot(home, "results-seed-chosen")
    # The pages fixture fails the test on any console error: a blocked script, style or
    # socket is one.


def test_a_second_tab_takes_the_race_and_the_first_says_so(
    pages: Pages, server: str, new_bot: NewBot
) -> None:
    from tests.client.helpers import create_race, own_cards, own_legal, wait_seq

    created = create_race(server, players=2)
    race = created["race"]
    first = pages.open(f"/race/{race}")
    first.fill("#racer-name", "Tabby")
    first.click("text=Join race")
    first.wait_for_selector("text=You're in, Tabby.")
    bot = new_bot()
    bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
    bot.request({"type": "start", "race": race, "token": created["host_token"]})
    first.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    second = first.context.new_page()  # same browser, same token
    second.on("console", pages._console)
    second.goto(f"{server}/race/{race}")
    second.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    first.wait_for_selector("#take-over", timeout=WAIT_MS)
    assert "another tab" in first.locator(".banner").inner_text()
    first.wait_for_selector('[data-board="own"].disabled')  # redrawn on the next frame
    move = own_legal(second)[0]
    second.evaluate("(m) => window.solrace.session.move(m)", move)
    wait_seq(second, 1)
    first.click("#take-over")  # back to the first tab: now the second one says so
    second.wait_for_selector("#take-over", timeout=WAIT_MS)
    wait_seq(first, 1)
    assert own_cards(first) == own_cards(second)
    assert own_legal(first) and own_legal(second) == []  # only the tab that plays it moves
