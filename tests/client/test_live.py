"""The home page's live strip: players online and races running, the featured race's small live
board following its moves over the page's one socket, "Watch" opening its spectator page, the
next race featured when it ends, quiet when nothing runs, and the arenas with their countdowns.
A server of its own: a race of another test would be featured instead."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.client.conftest import start_server
from tests.client.contrast import whole_page_failures
from tests.client.helpers import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    board_cards,
    both_widths,
    scotch_seed_with_foundation_moves,
    settle,
)

NewBot = Callable[[], Bot]
#: The strip asks every 5 s for figures at most 2 s old.
STRIP_MS = 5000 + 2000 + WAIT_MS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from start_server(tmp_path_factory.mktemp("live-server") / "races.db", "--pool", "0")


def public_race(new_bot: NewBot, names: tuple[str, str]) -> tuple[str, list[Bot]]:
    """A public Scotch race of two bot-driven racers, running (a deal with two Aces to send
    home at once)."""
    host = new_bot()
    created = host.request({"type": "create", "game": "scotch", "players": 2, "public": True,
                            "time_limit": 600, "seed": str(scotch_seed_with_foundation_moves())})
    race = created["race"]
    racers = [new_bot(), new_bot()]
    for bot, name in zip(racers, names, strict=True):
        bot.request({"type": "join", "race": race, "name": name})
    host.request({"type": "start", "race": race, "token": created["host_token"]})
    for bot in racers:
        bot.wait_state()
    return race, racers


def foundation_cards(page: Any) -> int:
    return sum(len(cards) for pile, cards in board_cards(page, "featured").items()
               if pile.startswith("f"))


def assert_fits_and_reads(page: Any, name: str) -> None:
    """At both widths: nothing wider than the window, every text of WCAG AA contrast."""
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        settle(page)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), size
        bad = whole_page_failures(page)
        assert not bad, f"{name} at {size['width']}: text below WCAG AA contrast: {bad}"
    page.set_viewport_size(DESKTOP)
    page.evaluate("window.scrollTo(0, 0)")
    settle(page)


def test_the_featured_race_live_and_one_click_to_watch(pages: Pages, new_bot: NewBot) -> None:
    home = pages.open("/")
    sockets: list[str] = []
    home.on("websocket", lambda ws: sockets.append(ws.url))
    counts = home.locator(".live-counts")
    counts.wait_for()
    # Nothing runs: the strip says so, and how to start one.
    assert counts.get_attribute("data-races") == "0"
    quiet = home.locator(".featured-quiet")
    quiet.wait_for()
    assert "No race running right now — start one" in quiet.inner_text()
    both_widths(home, "live-quiet")
    assert_fits_and_reads(home, "live-quiet")
    # Two races start; the one that started last is featured (equal ratings).
    first, first_racers = public_race(new_bot, ("Cat", "Dan"))
    race, (ann, bob) = public_race(new_bot, ("Ann", "Bob"))
    featured = home.locator(f'.featured-race[data-race="{race}"]')
    featured.wait_for(timeout=STRIP_MS)
    home.wait_for_selector('[data-board="featured"] [data-card]')
    home.wait_for_function("document.querySelector('.live-counts').dataset.races === '2'",
                           timeout=STRIP_MS)
    assert "2 races running" in counts.inner_text()
    assert int(counts.get_attribute("data-players") or 0) >= 1  # this page, at least
    racers = home.locator(".featured-racers").inner_text()
    assert "Ann" in racers and "Bob" in racers
    assert "Scotch Patience" in home.locator(".featured-meta").inner_text()
    # The board follows the race: Ann's cards going home show on it (she leads).
    ann.play(race, 2)
    home_cards = (ann.state or {})["progress"]["foundation"]
    assert home_cards == 2
    home.wait_for_function(
        "(n) => [...document.querySelectorAll('[data-board=\"featured\"] [data-pile^=\"f\"] "
        "[data-card]')].length === n", arg=home_cards, timeout=WAIT_MS)
    assert foundation_cards(home) == home_cards
    assert home.locator(".featured-racer.leading").inner_text().count("Ann") == 1
    assert home.locator(".featured-caption").inner_text() == "Ann's board"
    both_widths(home, "live-featured", full_page=True)
    assert_fits_and_reads(home, "live-featured")
    # It ends (a resign in a race of two): the other race is featured, on the same socket.
    bob.request({"type": "resign", "race": race})
    home.locator(f'.featured-race[data-race="{first}"]').wait_for(timeout=STRIP_MS)
    home.wait_for_selector('[data-board="featured"] [data-card]')
    assert "Cat" in home.locator(".featured-racers").inner_text()
    assert len(sockets) == 1, sockets
    # Watch: the spectator page of the featured race.
    home.locator(".featured-watch").click()
    home.wait_for_url(f"**/race/{first}/watch")
    home.wait_for_selector('[data-board="p1"] [data-card]')
    home.wait_for_selector('[data-board="p2"] [data-card]')
    # The race ends too, nothing runs: quiet again, back home.
    first_racers[0].request({"type": "resign", "race": first})
    home.go_back()
    home.locator(".featured-quiet").wait_for(timeout=STRIP_MS)
    home.wait_for_function("document.querySelector('.live-counts').dataset.races === '0'",
                           timeout=STRIP_MS)


def test_the_arenas_running_and_next_with_their_countdowns(pages: Pages) -> None:
    """The arenas as GET /api/arenas gives them (a stand-in list here: docs/protocol.md
    "Arenas"): the running one first, then the next ones by their start, each a link to its
    page, with a countdown that ticks; finished ones left out."""
    now = int(time.time() * 1000)
    arenas = [
        {"arena": "A3", "name": "Sunday Yukon", "game": "yukon", "status": "upcoming",
         "starts_at": now + 2 * 86400_000, "ends_at": now + 2 * 86400_000 + 3600_000,
         "players": 0},
        {"arena": "A2", "name": "Hourly Scotch", "game": "scotch", "status": "upcoming",
         "starts_at": now + 3900_000, "ends_at": now + 7500_000, "players": 3},
        {"arena": "A1", "name": "Blitz Arena", "game": "scotch", "status": "running",
         "starts_at": now - 60_000, "ends_at": now + 600_000, "players": 12},
        {"arena": "A0", "name": "Yesterday", "game": "scotch", "status": "finished",
         "starts_at": now - 86400_000, "ends_at": now - 80000_000, "players": 40},
    ]
    page = pages.open("/")
    page.context.route("**/api/arenas", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(arenas)))
    page.reload()
    rows = page.locator(".arena-list .arena-row")
    rows.first.wait_for()
    assert [rows.nth(i).get_attribute("data-arena") for i in range(rows.count())] == \
        ["A1", "A2", "A3"]
    running = rows.nth(0)
    assert running.locator(".arena-live").inner_text().lower() == "live"
    assert running.locator("a").get_attribute("href") == "/arena/A1"
    assert "12 players" in running.inner_text()
    when = running.locator(".arena-when")
    first = when.inner_text()
    assert first.startswith("ends in 9:5") or first.startswith("ends in 10:00"), first
    page.wait_for_function("(t) => document.querySelector('.arena-when').textContent !== t",
                           arg=first, timeout=WAIT_MS)  # it ticks
    assert rows.nth(1).locator(".arena-when").inner_text().startswith("starts in 1 h 0")
    assert "3 players" in rows.nth(1).inner_text()
    assert rows.nth(2).locator(".arena-when").inner_text().startswith("starts ")
    both_widths(page, "live-arenas", full_page=True)
    assert_fits_and_reads(page, "live-arenas")
