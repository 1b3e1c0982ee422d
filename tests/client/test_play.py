"""One click to a race (issue 18): two visitors race each other from the home page's Quick race
(guests: a casual race, and the page says why); a player with a password plays a house bot to
the end and sees his rating change once, on the results and on his page; a player keeps his
name and, with a password, is the same player in another browser; the daily deal is played
from its page; an opponent who never takes his seat sends the racer back to the queue. Every
browser context has its own cookie jar: its own player."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.client.conftest import start_server
from tests.client.helpers import (
    WAIT_MS,
    Pages,
    both_widths,
    own_legal,
    settle,
    wait_seq,
)

#: The width a phone has in these screenshots (the smallest the pages are made for).
SMALL = {"width": 375, "height": 812}


def me(page: Any) -> dict[str, Any]:
    """``GET /api/me`` as this page's browser (its cookie)."""
    return page.evaluate("fetch('/api/me').then(r => r.json())")


def player_api(page: Any, name: str) -> dict[str, Any]:
    return page.evaluate(
        "(n) => fetch(`/api/players/${encodeURIComponent(n)}`).then(r => r.json())", name)


def resign(page: Any) -> None:
    page.click("#resign")
    page.click("#resign")  # "Really resign?"


def seated(page: Any) -> None:
    """The race page took the seat it was given and the race runs: the own board is dealt."""
    # A seek, a pairing and a page load: on a machine busy with other work, more than 10 s.
    page.wait_for_url("**/race/*", timeout=WAIT_MS * 2)
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
    settle(page)


def pick_name(page: Any, name: str) -> None:
    """Name the player with the top bar's menu."""
    page.click(".me-menu summary")
    page.click("#me-rename")
    page.fill("#me-name-input", name)
    page.click("#me-name-form button[type=submit]")
    page.wait_for_selector(f".topbar a.me-name >> text={name}")


def set_password(page: Any) -> None:
    """Set a password with the top bar's menu (and close it)."""
    if not page.locator("details.me-menu[open]").count():
        page.click(".me-menu summary")
    page.click("#me-set-password")
    page.fill("#me-password", "correct horse")
    page.click("#me-password-form button[type=submit]")
    page.wait_for_selector(".me-done >> text=Password saved")
    page.click(".me-menu summary")


def test_quick_race_between_two_visitors(pages: Pages) -> None:
    ann = pages.open("/")
    bob = pages.open("/")
    for page in (ann, bob):
        page.wait_for_selector(".quick-btn[data-game=scotch]")
    ann.check("#quick-time-180", force=True)
    ann.click(".quick-btn[data-game=scotch]")
    # Waiting: the time waited, when a bot would take the seat, and Cancel (which works).
    ann.wait_for_selector(".seeking .seek-status >> text=Looking for an opponent")
    ann.wait_for_selector(".seek-bot >> text=/A bot joins in \\d+ s/")
    assert "Scotch Patience · 3 min · casual" in ann.locator(".seek-title").inner_text()
    # A guest's race is casual: the page says how to play rated.
    assert ann.locator(".seek-casual").inner_text() == "Casual: set a password to play rated"
    both_widths(ann, "quick-race-seeking", phone=SMALL)
    ann.click("#cancel-seek")
    ann.wait_for_selector(".quick-btn[data-game=scotch]")
    # Both seek the same game and time: they are paired with each other, not with a bot.
    bob.check("#quick-time-180", force=True)
    ann.click(".quick-btn[data-game=scotch]")
    bob.click(".quick-btn[data-game=scotch]")
    seated(ann)
    seated(bob)
    assert ann.url == bob.url  # the same race
    # Each racer is a player: a name linked to his page, with his rating at the start.
    ann.wait_for_selector('.opponents .player-name a.player-link')
    assert ann.locator(".opponents .bot-tag").count() == 0
    bob_name = me(bob)["player"]["name"]
    assert ann.locator(".opponents a.player-link").inner_text() == bob_name
    both_widths(ann, "quick-race", phone=SMALL)
    # A move, then Ann resigns (which ends a race of two: Bob wins): the results say why the
    # race was casual, and how to make the next one rated.
    move = own_legal(ann)[0]
    ann.evaluate("(m) => window.solrace.session.move(m)", move)
    wait_seq(ann, 1)
    resign(ann)
    bob.wait_for_selector(".you-outcome >> text=Won: every other racer resigned",
                          timeout=WAIT_MS)
    for page in (ann, bob):
        page.wait_for_selector('.rating-line[data-casual="guest"] >> text=/guests play casual '
                               'races. Set a password/', timeout=WAIT_MS)
        assert page.locator(".results .next-quick").is_visible()
    ann.wait_for_selector('.you-outcome >> text=Lost (resigned)')
    both_widths(ann, "casual-guest-results")
    # "Next quick race" seeks again at once, from the home page.
    bob.click(".results .next-quick")
    bob.wait_for_selector(".seeking .seek-status >> text=Looking for an opponent")
    assert "Scotch Patience · 3 min" in bob.locator(".seek-title").inner_text()
    bob.click("#cancel-seek")


def test_a_bot_race_from_home_to_the_end_and_the_rating_once(pages: Pages) -> None:
    page = pages.open("/", csp=True)  # the new pages keep to the security policy too
    pick_name(page, "Botty")
    set_password(page)  # an account: its races are rated
    page.select_option("#bot-game", "scotch")
    page.check("#bot-level-1", force=True)
    page.click("#play-bot")
    seated(page)
    # The bot is labelled as one, with its level; it links to no player page.
    opponent = page.locator(".opponents .player-card")
    opponent.locator(".bot-tag").wait_for()
    assert "level 1" in opponent.inner_text()
    assert opponent.locator("a.player-link").count() == 0
    for seq in (1, 2, 3):  # three moves: committed to the race (fewer would abort it)
        page.evaluate("(m) => window.solrace.session.move(m)", own_legal(page)[0])
        wait_seq(page, seq)
    resign(page)
    page.wait_for_selector(".results .standings-table", timeout=WAIT_MS)
    page.wait_for_selector(".you-outcome >> text=Lost (resigned)")  # a resign is a loss
    line = page.locator(".rating-line strong")
    line.wait_for(timeout=WAIT_MS * 2)
    change = line.inner_text()  # "1500 → 1437? (−63)"
    assert change.startswith("1500 → ")
    after = int(change.split("→ ")[1].split("?")[0].split(" ")[0])
    assert after != 1500
    assert page.locator(".results .bot-again").is_visible()
    assert page.locator(".results .rematch").is_hidden()  # a house bot comes to no rematch
    both_widths(page, "bot-race-results", phone=SMALL)
    # Reloaded, the results show the same change: the race was scored once.
    page.reload()
    page.wait_for_selector(".rating-line strong", timeout=WAIT_MS)
    assert page.locator(".rating-line strong").inner_text() == change
    # The player's page: that rating, one rated race, the race among the recent ones.
    page.click(".topbar a.me-name")
    page.wait_for_url("**/player/Botty")
    page.wait_for_selector('.rating-card[data-game="scotch"] .rating-chart svg circle')
    card = page.locator('.rating-card[data-game="scotch"]')
    assert card.locator(".rating-value").inner_text().rstrip("?") == str(after)
    assert "1 rated race" in card.inner_text()
    assert page.locator(".recent-table tbody tr").count() == 1
    data = player_api(page, "Botty")
    assert data["ratings"]["scotch"]["races"] == 1
    assert round(data["ratings"]["scotch"]["rating"]) == after
    both_widths(page, "player-page", full_page=True, phone=SMALL)
    # The leaderboard wants more rated races than one.
    page.click('.rating-card[data-game="scotch"] a >> text=Leaderboard')
    page.wait_for_selector(".leaderboard-page .empty-board, .leaderboard-table")
    both_widths(page, "leaderboard", phone=SMALL)


def test_a_name_kept_and_signing_in_on_another_device(pages: Pages) -> None:
    first = pages.open("/")
    pick_name(first, "Keeper")
    first.reload()  # the name is the server's, not this page's
    first.wait_for_selector(".topbar a.me-name >> text=Keeper")
    assert first.input_value("#join-name") == "Keeper"
    # A password, so that the player can come back elsewhere.
    first.click(".me-menu summary")
    first.click("#me-set-password")
    first.fill("#me-password", "correct horse")
    first.click("#me-password-form button[type=submit]")
    first.wait_for_selector(".me-done >> text=Password saved")
    first.wait_for_selector("#me-set-password >> text=Change password")
    both_widths(first, "me-menu", phone=SMALL)
    # Another browser: the name belongs to someone else...
    second = pages.open("/")
    pick = second.locator(".me-menu summary")
    pick.click()
    second.click("#me-rename")
    second.fill("#me-name-input", "k\u0435\u0435per")  # the same name: Cyrillic е, lower case
    second.click("#me-name-form button[type=submit]")
    second.wait_for_selector(".me-panel .form-msg >> text=belongs to another player")
    second.fill("#me-name-input", "Ace bot")  # a house bot's
    second.click("#me-name-form button[type=submit]")
    second.wait_for_selector(".me-panel .form-msg >> text=kept for the site")
    # ...until it signs in with the password: then it is that player.
    second.click("#me-sign-in")
    second.fill("#signin-name", "Keeper")
    second.fill("#signin-password", "wrong password")
    second.click("#me-signin-form button[type=submit]")
    second.wait_for_selector(".me-panel .form-msg >> text=Wrong name or password")
    second.fill("#signin-password", "correct horse")
    with second.expect_navigation():
        second.click("#me-signin-form button[type=submit]")
    second.wait_for_selector(".topbar a.me-name >> text=Keeper")
    assert me(second)["player"]["id"] == me(first)["player"]["id"]
    # Signing out forgets this browser's key: a guest again; the first browser is still Keeper.
    second.click(".me-menu summary")
    second.click("#me-sign-out")
    assert "sign in again" in second.locator(".signout-warning").inner_text()
    with second.expect_navigation():
        second.click("#me-signout-form button[type=submit]")
    second.wait_for_selector(".topbar .me-name >> text=Guest")
    assert me(second)["player"] is None
    assert me(first)["player"]["name"] == "Keeper"


def test_the_daily_deal(pages: Pages) -> None:
    page = pages.open("/", csp=True)
    # A name typed once (to join a friend's race, as a visitor) is the player's when he first
    # needs one.
    page.evaluate("localStorage.setItem('solrace:name', 'Dailyn')")
    page.click(".home-links a.daily-link")
    page.wait_for_url("**/daily")
    page.wait_for_selector("#play-daily")
    assert page.locator('.game-tab[aria-current="page"]').inner_text() == "Scotch Patience"
    assert page.locator(".daily-play h2").inner_text().startswith("Scotch Patience — ")
    page.click("#play-daily")
    seated(page)
    assert page.locator(".opponents .player-card").count() == 0  # alone against the clock
    assert page.locator("#spectate").is_hidden()
    # Nobody else may watch it today.
    race = page.url.rstrip("/").rsplit("/", 1)[1]
    outsider = pages.open(f"/race/{race}/watch")
    outsider.wait_for_selector(".race-refused >> text=/secret until the day is over/")
    assert outsider.locator("[data-board]").count() == 0
    for seq in (1, 2, 3):  # three moves: played to its end, it counts for the streak
        page.evaluate("(m) => window.solrace.session.move(m)", own_legal(page)[0])
        wait_seq(page, seq)
    resign(page)
    page.wait_for_selector(".results .reveal-wait >> text=/revealed.*once the day is over/")
    page.click(".results a.daily-back")
    page.wait_for_url("**/daily/scotch")
    page.wait_for_selector(".daily-result >> text=You played today's deal")
    assert page.locator(".daily-streak .streak-count").inner_text() == "1"
    assert me(page)["player"]["name"] == "Dailyn"
    # A guest plays it unranked: where he would stand, and how to be ranked.
    page.wait_for_selector(".daily-result >> text=/unranked: it would be \\d+(st|nd|rd|th)/")
    assert "Set a password" in page.locator(".daily-guest").inner_text()
    assert page.locator(".daily-table .day-table >> text=Dailyn").count() == 0
    page.wait_for_selector(".topbar a.me-name >> text=Dailyn")
    assert page.locator("#play-daily").inner_text() == "See your race"
    both_widths(page, "daily", full_page=True, phone=SMALL)


@pytest.fixture(scope="module")
def short_grace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose paired racers have 5 s to take their seats (not 15)."""
    yield from start_server(tmp_path_factory.mktemp("short-grace") / "races.db",
                            prelude="import solrace.settings as s; s.SEAT_GRACE_S = 5")


def test_an_opponent_who_never_sits_sends_the_racer_back_to_the_queue(
        browser: Any, short_grace: str) -> None:
    # The no-show: a browser of its own (a cookie) on the protocol, that seeks and never sits.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(short_grace + "/", timeout=WAIT_MS / 1000) as res:
        key = res.headers["Set-Cookie"].split(";", 1)[0].split("=", 1)[1]
    ws_url = short_grace.replace("http://", "ws://") + "/ws"
    with connect(ws_url, additional_headers={"Cookie": f"sr_player={key}"}) as ghost:
        ghost.send(json.dumps({"type": "seek", "game": "scotch", "time_limit": 300,
                               "bot_after": 0, "rid": 1}))
        assert json.loads(ghost.recv(timeout=WAIT_MS / 1000))["type"] == "seeking"
        pages = Pages(browser, short_grace)
        try:
            ann = pages.open("/")
            ann.wait_for_selector(".quick-btn[data-game=scotch]")
            ann.click(".quick-btn[data-game=scotch]")
            ann.wait_for_url("**/race/*", timeout=WAIT_MS)
            # Nobody comes: the race does not take place, and the page seeks again at once.
            ann.wait_for_selector(".toast >> text=Your opponent did not come", timeout=WAIT_MS)
            ann.wait_for_selector(".seeking .seek-status >> text=Looking for an opponent")
            assert ann.url.rstrip("/") == short_grace
            ann.click("#cancel-seek")
            assert pages.errors == []
        finally:
            pages.close()
        # The no-show may not seek for a while.
        ghost.send(json.dumps({"type": "seek", "game": "scotch", "time_limit": 300, "rid": 2}))
        while (msg := json.loads(ghost.recv(timeout=WAIT_MS / 1000))).get("rid") != 2:
            pass
        assert msg["type"] == "error" and msg["code"] == "no_show"
