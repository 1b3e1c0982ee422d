"""Tournaments in the browser: a host creates one from the home page and runs it from its page,
two entrants join from two other browsers and are taken to their races and on to the next round,
a spectator follows the standings; the race page of a tournament race links back; host tools
with their confirmations and refusals; a knockout's bracket."""

from __future__ import annotations

import csv
import io
import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from tests.client.helpers import WAIT_MS, Bot, Pages, both_widths, own_legal, settle

NewBot = Callable[[], Bot]
PHONE_375 = {"width": 375, "height": 812}


def tournament_id(page: Any) -> str:
    return page.url.rstrip("/").rsplit("/", 1)[1]


def join_tournament(page: Any, name: str, code: str | None = None) -> None:
    page.fill("#entrant-name", name)
    if code is not None:
        page.fill("#entry-code", code)
    page.click("text=Join tournament")
    page.wait_for_selector(f".you-panel >> text=You're in as {name}")


def race_dealt(page: Any) -> None:
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
    settle(page)


def resign(page: Any) -> None:
    page.click("#resign")
    page.click("#resign")


def points(page: Any) -> dict[str, list[str]]:
    """Entrant name -> [round 1 points, ..., total] as the standings table shows them."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
        '.tournament-table tbody tr')].map(tr => [tr.querySelector('.entrant-name').textContent,
        [...tr.querySelectorAll('.round-points, .points')].map(td => td.textContent)]))""")


def wait_round_over(page: Any, round_: int, total: int) -> None:
    """Until the page shows ``round_`` over (its points are in the same redraw)."""
    page.wait_for_selector(f".t-status >> text=Round {round_} of {total} · over",
                           timeout=WAIT_MS * 2)


def test_tournament_from_home_page_to_standings(pages: Pages) -> None:
    # The host creates a triathlon from the home page; the gap is 0, so he starts each round.
    # The host's and Ann's pages keep to the Content-Security-Policy (the tournament's modules
    # and stylesheet are loaded on demand): any violation is a console error, which fails.
    host = pages.open("/", csp=True)
    host.fill("#t-name", "Spring Cup")
    host.click("#t-triathlon")
    assert host.input_value("#t-rounds") == "3"
    host.click(".t-create summary")
    host.select_option("#t-gap", "0")
    host.select_option("#t-grace", "15")
    both_widths(host, "tournament-create-form", full_page=True, phone=PHONE_375)
    host.click("text=Create tournament")
    host.wait_for_selector(".host-panel >> text=Host tools")
    tid = tournament_id(host)
    path = f"/tournament/{tid}"
    assert host.url.endswith(path)
    host.wait_for_selector(".t-facts >> text=3 rounds")  # drawn once the snapshot is in
    assert host.locator("#t-start").is_disabled()  # nobody has entered yet

    # Two entrants, one on a phone; a spectator who only watches.
    ann = pages.open(path, csp=True)
    join_tournament(ann, "Ann")
    bob = pages.open(path, viewport=PHONE_375)
    join_tournament(bob, "Bob")
    viewer = pages.open(path)
    viewer.wait_for_selector(".entrant-list >> text=Bob")
    host.wait_for_selector(".entrant-list >> text=Bob")
    assert ann.locator(".entrant-list li.is-you").inner_text().startswith("Ann")
    both_widths(host, "tournament-entry-host", full_page=True, phone=PHONE_375)

    # Round 1: both entrants are taken to their race, which starts once both are in.
    host.click("#t-start")
    race1 = f"{tid}-1"
    ann.wait_for_url(f"**/race/{race1}", timeout=WAIT_MS)
    bob.wait_for_url(f"**/race/{race1}", timeout=WAIT_MS)
    race_dealt(ann)
    race_dealt(bob)
    # The race page says which tournament and round, and links back.
    bar = ann.locator(".tournament-bar")
    assert "Spring Cup" in bar.inner_text() and "Round 1" in bar.inner_text()
    assert bar.locator("a.t-bar-link").get_attribute("href") == path
    both_widths(ann, "tournament-race", phone=PHONE_375)

    # Bob sends a card home if the deal allows, then Ann resigns: a race of two, Bob wins it
    # (a resign is a loss); the round is over.
    home = [m for m in own_legal(bob) if ">f" in m]
    if home:
        bob.evaluate("(m) => window.solrace.session.move(m)", home[0])
        bob.wait_for_function("window.solrace.session.model.own.seq === 1")
    resign(ann)
    ann.wait_for_selector(".results .back-to-tournament", timeout=WAIT_MS)
    bob.wait_for_selector(".results .back-to-tournament", timeout=WAIT_MS)
    assert ann.locator(".results .rematch").is_hidden()  # no rematch in a tournament

    # The standings change for everyone following the tournament.
    winner, loser = "Bob", "Ann"
    for page in (host, viewer):
        wait_round_over(page, 1, 3)
        table = points(page)
        assert table[winner][0] == "1" and table[loser][0] == "0", table
        first = page.locator(".tournament-table tbody tr").first
        assert first.locator(".entrant-name").inner_text() == winner
    assert "Round 2 starts when the host starts it" in host.inner_text(".t-next")
    link = viewer.locator(f'.race-link[data-race="{race1}"] a')
    assert link.get_attribute("href") == f"/race/{race1}/watch"  # a spectator's link
    both_widths(host, "tournament-round-over", full_page=True, phone=PHONE_375)
    both_widths(ann, "tournament-race-results", full_page=True, phone=PHONE_375)

    # Ann goes back to the tournament page: her row is marked, her race listed as hers.
    ann.click(".results .back-to-tournament")
    ann.wait_for_url(f"**{path}")
    ann.wait_for_selector(".tournament-table tr.is-you")
    assert ann.locator(".tournament-table tr.is-you .entrant-name").inner_text() == "Ann"
    link = ann.locator(f'.race-link[data-race="{race1}"] a')
    assert link.get_attribute("href") == f"/race/{race1}"  # her own race: the race page

    # Round 2: Ann from the tournament page, Bob from his race's results, both taken to it.
    host.click("#t-next")
    race2 = f"{tid}-2"
    ann.wait_for_url(f"**/race/{race2}", timeout=WAIT_MS)
    bob.wait_for_url(f"**/race/{race2}", timeout=WAIT_MS)
    race_dealt(bob)
    assert "Round 2" in bob.inner_text(".tournament-bar")
    assert bob.locator('[data-board="own"]').get_attribute("data-game") == "yukon"

    # The host finishes early, after a confirmation; everyone sees the final table.
    host.click("#t-finish")
    host.wait_for_selector(".confirm-box >> text=End the tournament now?")
    assert host.evaluate("document.activeElement.id") == "t-cancel"
    host.click("#t-cancel")
    assert host.locator(".confirm-box").is_hidden()
    host.click("#t-finish")
    host.click("#t-confirm")
    for page in (host, viewer):
        page.wait_for_selector(".standings-panel >> text=Final table", timeout=WAIT_MS)
        assert page.inner_text(".t-status") == "Finished"
    viewer.wait_for_selector(f".t-winner >> text={winner}")
    both_widths(viewer, "tournament-final", full_page=True, phone=PHONE_375)

    # The table as CSV, from the page's link.
    href = viewer.locator("a.t-csv").get_attribute("href")
    assert href == f"/api/tournaments/{tid}/standings.csv"
    with urllib.request.urlopen(pages.base + href) as res:
        rows = list(csv.reader(io.StringIO(res.read().decode())))
    assert rows[0] == ["place", "name", "points", "entrant", "bot"]
    # A resign is a loss whether Bob sent a card home or not (tournament_parts.Result.rank): Ann
    # is second either way (this line expected "1" when the deal had no card to send home).
    assert rows[1][:2] == ["1", winner] and rows[2][:2] == ["2", loser]


def test_host_tools_confirm_and_say_refusals(pages: Pages) -> None:
    host = pages.open("/")
    host.fill("#t-name", "Code Cup")
    host.click(".t-create summary")
    host.fill("#t-code", "sesame")
    host.click("text=Create tournament")
    host.wait_for_selector(".host-panel")
    path = f"/tournament/{tournament_id(host)}"

    # The entry code: refused without it (said next to the form), accepted with it.
    eve = pages.open(path, viewport=PHONE_375)
    eve.wait_for_selector("#entry-code")
    join_tournament_fails = eve.locator(".you-panel .form-msg")
    eve.fill("#entrant-name", "Eve")
    eve.fill("#entry-code", "wrong")
    eve.click("text=Join tournament")
    join_tournament_fails.wait_for()
    assert "entry code" in join_tournament_fails.inner_text()
    eve.fill("#entry-code", "sesame")
    eve.click("text=Join tournament")
    eve.wait_for_selector("text=You're in as Eve")

    # Closing entry: a newcomer is told; opening it again lets him in.
    host.wait_for_selector(".entrant-list >> text=Eve")
    host.click("#t-entry")
    host.wait_for_selector("#t-entry >> text=Open entry")
    late = pages.open(path)
    late.wait_for_selector(".you-panel >> text=Entry is closed for now.")
    assert host.locator("#t-start").is_disabled()
    assert "at least two entrants" in host.inner_text(".host-note")
    host.click("#t-entry")
    late.wait_for_selector("#entry-code")
    join_tournament(late, "Lee", code="sesame")
    host.wait_for_selector(".entrant-list >> text=Lee")
    host.wait_for_function("!document.querySelector('#t-start').disabled")

    # Removing an entrant asks first; Escape cancels, "Yes" removes.
    host.click('.entrant-list [data-entrant="e2"] .remove-entrant')
    host.wait_for_selector(".confirm-box >> text=Remove Lee from the tournament?")
    host.keyboard.press("Escape")
    assert host.locator(".confirm-box").is_hidden()
    assert host.evaluate("document.activeElement.dataset.entrant") == "e2"  # focus goes back
    host.click('.entrant-list [data-entrant="e2"] .remove-entrant')
    host.click("#t-confirm")
    host.wait_for_selector('.entrant-list li.removed[data-entrant="e2"]')
    late.wait_for_selector(".you-panel >> text=The host removed you")
    both_widths(host, "tournament-host-tools", full_page=True, phone=PHONE_375)

    # A browser whose host token the server does not know is refused, next to the controls.
    other = pages.open("/")
    other.evaluate(f"localStorage.setItem('solrace:thost:{tournament_id(host)}', 'not-the-token')")
    other.goto(pages.base + path)
    other.wait_for_selector(".host-panel")
    other.click("#t-entry")
    other.wait_for_selector(".host-msg >> text=/host token/")


# ----------------------------------------------------------------------------- knockout
def read_until(bot: Bot, kind: str, timeout: float = WAIT_MS / 1000) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while True:
        msg = json.loads(bot.ws.recv(timeout=max(0.01, end - time.monotonic())))
        for m in msg if isinstance(msg, list) else [msg]:
            if m.get("type") == kind:
                return m


def test_knockout_bracket(pages: Pages, new_bot: NewBot) -> None:
    admin = new_bot()
    created = admin.request({"type": "tournament_create", "name": "Cup KO", "format": "knockout",
                             "games": ["scotch"], "best_of": 1, "gap": 0, "grace": 30})
    tid, token = created["tournament"], created["host_token"]
    entrants = []
    for name in ("Ana", "Ben", "Cy"):
        bot = new_bot()
        bot.request({"type": "tournament_join", "tournament": tid, "name": name, "bot": True})
        entrants.append(bot)
    host = pages.open("/")
    host.evaluate(f"localStorage.setItem('solrace:thost:{tid}', '{token}')")
    host.goto(f"{pages.base}/tournament/{tid}")
    host.wait_for_selector(".entrant-list >> text=Cy")
    assert host.locator(".entrant-list .bot-tag").count() == 3  # bots are labelled
    host.click("#t-start")
    # Three entrants: Ana has a bye, Ben plays Cy.
    bracket = host.locator(".bracket")
    bracket.wait_for()
    assert bracket.locator(".bracket-round").count() == 2
    first = bracket.locator('.bracket-match[data-match="1"]')
    assert "Ana" in first.inner_text() and "bye" in first.inner_text()
    game = bracket.locator('.bracket-match[data-match="2"] .match-games a')
    game.wait_for()
    race = game.get_attribute("href").split("/")[2]
    # Ben and Cy take their seats; Cy resigns: Ben wins the match.
    for bot in entrants[1:]:
        seat = read_until(bot, "round")
        bot.request({"type": "join", "race": seat["race"], "token": seat["token"]})
    read_until(entrants[2], "started")
    entrants[2].request({"type": "resign", "race": race})
    entrants[1].request({"type": "resign", "race": race})
    host.wait_for_selector('.bracket-match[data-match="2"] .bracket-slot.winner >> text=Ben')
    host.wait_for_selector(".tournament-table >> text=out in the semi-finals")
    # The final waits for the host (gap 0); then Ana meets Ben.
    host.click("#t-next")
    host.wait_for_selector('.bracket-match[data-match="3"] >> text=Ana')
    assert "Ben" in host.inner_text('.bracket-match[data-match="3"]')
    both_widths(host, "tournament-knockout", full_page=True, phone=PHONE_375)
    admin.request({"type": "tournament_finish", "tournament": tid, "token": token})
    host.wait_for_selector(".standings-panel >> text=Final table")


def test_a_race_that_ends_first_waits_for_its_rounds_reveal(pages: Pages, new_bot: NewBot) -> None:
    admin = new_bot()
    created = admin.request({"type": "tournament_create", "name": "Duo", "format": "rounds",
                             "games": ["scotch"], "rounds": 2, "race_size": 2, "gap": 30,
                             "grace": 30})
    tid, token = created["tournament"], created["host_token"]
    ann = pages.open(f"/tournament/{tid}")
    join_tournament(ann, "Ann")  # e1: with e2 in the first race; e3 and e4 in the second
    bots = []
    for name in ("Bo", "Cy", "Di"):
        bot = new_bot()
        bot.request({"type": "tournament_join", "tournament": tid, "name": name, "bot": True})
        bots.append(bot)
    admin.request({"type": "tournament_start", "tournament": tid, "token": token})
    seats = [read_until(bot, "round") for bot in bots]
    for bot, seat in zip(bots, seats, strict=True):
        bot.request({"type": "join", "race": seat["race"], "token": seat["token"]})
    ann.wait_for_url(f"**/race/{seats[0]['race']}", timeout=WAIT_MS)
    race_dealt(ann)
    resign(ann)  # Bo is a bot: the race ends when its only human is done
    # Her race is over, the round is not: the deal stays secret, and so do the replays.
    ann.wait_for_selector(".reveal-wait")
    # The replay part is drawn after the race's summary is fetched: wait for it, not just read.
    ann.wait_for_selector(".replay >> text=Replays open when every race of the round has ended")
    read_until(bots[2], "started")
    for bot in bots[1:]:
        bot.request({"type": "resign", "race": seats[1]["race"]})
    # The round is over: the deal is revealed and checked, the replays open.
    ann.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    ann.wait_for_selector('[data-replay="a"] [data-card]', timeout=WAIT_MS)
    # The next round starts by itself after the gap: its countdown shows under the results...
    ann.wait_for_selector(".tournament-bar .t-bar-next >> text=/^Round 2 starts in 0:[0-3]\\d$/")
    # ...and on the tournament page.
    ann.click(".tournament-bar a.t-bar-link")
    ann.wait_for_selector(".t-next >> text=/^Round 2 starts in 0:[0-3]\\d$/")
    assert ann.locator(".tournament-table tr.is-you .round-points").first.inner_text() != "–"
    admin.request({"type": "tournament_finish", "tournament": tid, "token": token})
    ann.wait_for_selector(".standings-panel >> text=Final table")


def test_a_shared_place_in_a_rounds_list(pages: Pages, new_bot: NewBot) -> None:
    """Two entrants who share a place are shown so in the round's list ("3= Cy  3= Di"), as
    the standings share it, not counted on as 3rd and 4th (issue 29, item 5); a first place
    shared is said so over the final table, nobody "wins" it alone."""
    admin = new_bot()
    created = admin.request({"type": "tournament_create", "name": "Tie Cup", "format": "rounds",
                             "games": ["scotch"], "rounds": 1, "race_size": 4, "gap": 0,
                             "grace": 30, "time_limit": 10})
    tid = created["tournament"]
    entrants = []
    for name in ("Ada", "Bea", "Cy", "Di"):
        entrant = new_bot()
        entrant.request({"type": "tournament_join", "tournament": tid, "name": name})
        entrants.append(entrant)
    watcher = pages.open(f"/tournament/{tid}")
    watcher.wait_for_selector(".entrant-list >> text=Di")
    admin.request({"type": "tournament_start", "tournament": tid, "token": created["host_token"]})
    seats = [read_until(entrant, "round") for entrant in entrants]
    for entrant, seat in zip(entrants, seats, strict=True):
        entrant.request({"type": "join", "race": seat["race"], "token": seat["token"]})
    read_until(entrants[3], "started")
    # Cy and Di resign with nothing home: they share 3rd. Ada and Bea let the 10 s run out with
    # nothing home either: they share 1st.
    for entrant in entrants[2:]:
        entrant.request({"type": "resign", "race": seats[2]["race"]})
    order = watcher.wait_for_selector(".round-card .race-order", timeout=WAIT_MS * 3)
    assert order.inner_text().split() == ["1=", "Ada", "1=", "Bea", "3=", "Cy", "3=", "Di"]
    standings = points(watcher)
    assert standings["Cy"] == standings["Di"] and standings["Ada"] == standings["Bea"]
    medals = watcher.locator(".tournament-table .medal").all_inner_texts()
    assert medals == ["1st", "1st", "3rd", "3rd"]
    watcher.wait_for_selector(".t-winner >> text=♛ Ada and Bea share first place.")
    watcher.locator(".round-card").scroll_into_view_if_needed()
    both_widths(watcher, "tournament-shared-places")
