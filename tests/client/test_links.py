"""Every link to a race works (issue 29, item 5): the pages are walked as a player who raced
(today's daily deal, a house bot, a race still running, a challenge waiting) and as a visitor,
and every Replay, Spectate, Watch, Race page and race code link on them is followed. Each must
open a page that shows its race: not "Race not found", not "You cannot watch this race"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.client.helpers import (
    WAIT_MS,
    Bot,
    Pages,
    both_widths,
    create_race,
    join_as,
    own_legal,
    settle,
    wait_seq,
)
from tests.client.test_fairplay import account
from tests.client.test_play import resign, seated
from tests.client.test_together import path_of
from tests.client.test_tournament import read_until

NewBot = Callable[[], Bot]

#: The race links a page shows: {href, text} (links within the page, "#main", left out).
RACE_LINKS = """() => [...document.querySelectorAll('a[href]')]
  .filter((a) => a.getClientRects().length && !a.getAttribute('href').startsWith('#'))
  .map((a) => new URL(a.href))
  .filter((u) => u.pathname.startsWith('/race/'))
  .map((u) => u.pathname + u.search)"""

#: What a page opened at a race's address shows, once it knows.
OUTCOME = """() => {
  if (document.querySelector('#main h1')?.textContent === 'Nothing here') return 'no such page';
  const m = window.solrace.session?.model;
  if (!m) return null;
  if (m.notFound) return 'race not found';
  if (m.refused) return `refused: ${m.refused}`;
  return m.loaded ? 'ok' : null;
}"""


def opens(context: Any, base: str, href: str) -> str:
    """What ``href`` shows in a new tab of ``context`` (the same browser: its tokens)."""
    page = context.new_page()
    try:
        page.goto(base + href)
        return str(page.wait_for_function(OUTCOME, timeout=WAIT_MS).json_value())
    finally:
        page.close()


def dead_links(page: Any, paths: list[str]) -> list[str]:
    """Every race link on the pages ``paths``, followed in this browser; those that do not work."""
    base = page.url.split("/", 3)[0] + "//" + page.url.split("/", 3)[2]
    followed: dict[str, str] = {}
    dead = []
    for path in paths:
        page.goto(base + path)
        page.wait_for_load_state("networkidle")  # the lists a page fetches are drawn
        settle(page)
        for href in page.evaluate(RACE_LINKS):
            if href not in followed:
                followed[href] = opens(page.context, base, href)
            if followed[href] != "ok":
                dead.append(f"{path}: {href} -> {followed[href]}")
    assert followed, "no race link at all: the walk saw nothing"
    return dead


def three_moves_and_resign(page: Any) -> None:
    for seq in (1, 2, 3):
        page.evaluate("(m) => window.solrace.session.move(m)", own_legal(page)[0])
        wait_seq(page, seq)
    resign(page)
    page.wait_for_selector(".results")


def test_every_race_link_opens_its_race(pages: Pages, new_bot: NewBot) -> None:
    # Linky, an account, plays today's daily deal and a house bot (both over), races Robo
    # (still running) and waits for a challenge by link.
    linky = pages.open("/daily/scotch")
    account(linky, "Linky")
    linky.click("#play-daily")
    seated(linky)
    daily = linky.url.rsplit("/", 1)[1]
    three_moves_and_resign(linky)
    linky.goto(pages.base + "/")
    linky.click("#play-bot")
    seated(linky)
    bot_race = linky.url.rsplit("/", 1)[1]
    three_moves_and_resign(linky)
    linky.goto(pages.base + "/")
    linky.click(".challenge-panel .challenge-link-btn")
    linky.wait_for_selector(".challenge-waiting >> text=/Send this link to a friend/")
    challenge = path_of(linky.input_value(".challenge-link"))
    robo = new_bot()
    created = create_race(pages.base, players=2)
    running = created["race"]
    linky.goto(f"{pages.base}/race/{running}")
    join_as(linky, "Linky")
    robo.request({"type": "join", "race": running, "name": "Robo", "bot": True})
    robo.request({"type": "start", "race": running, "token": created["host_token"]})
    linky.wait_for_selector('[data-board="own"] [data-card]')
    # A race this browser remembers that the server no longer has (a database reset).
    linky.evaluate("""() => { const l = JSON.parse(localStorage.getItem('solrace:recent'));
        l.push({race: 'gone42', game: 'scotch', what: 'raced', at: Date.now() - 3600000});
        localStorage.setItem('solrace:recent', JSON.stringify(l)); }""")
    # A tournament whose first round was dealt again: a void race beside the new one.
    admin = new_bot()
    t = admin.request({"type": "tournament_create", "name": "Links Cup", "format": "rounds",
                       "games": ["scotch"], "rounds": 2, "race_size": 2, "gap": 0, "grace": 30})
    tid, token = t["tournament"], t["host_token"]
    entrants = []
    for name in ("Bo", "Cy"):
        entrant = new_bot()
        entrant.request({"type": "tournament_join", "tournament": tid, "name": name, "bot": True})
        entrants.append(entrant)
    admin.request({"type": "tournament_start", "tournament": tid, "token": token})
    for entrant in entrants:
        seat = read_until(entrant, "round")
        entrant.request({"type": "join", "race": seat["race"], "token": seat["token"]})
    admin.request({"type": "tournament_redeal", "tournament": tid, "token": token, "round": 1})
    arenas = linky.evaluate("fetch('/api/arenas').then(r => r.json())")

    paths = ["/", f"/race/{bot_race}", f"/race/{bot_race}/watch", f"/race/{running}",
             f"/race/{running}/watch", f"/race/{daily}", f"/race/{daily}/watch", "/player/Linky",
             "/leaderboard/scotch", "/daily/scotch", f"/tournament/{tid}", challenge, "/mod",
             "/race/nosuchrace", "/race/nosuchrace/watch"]
    paths += [f"/arena/{a['arena']}" for a in arenas[:1]]
    visitor = pages.open("/")
    assert dead_links(linky, paths) == []
    assert dead_links(visitor, paths) == []
    # Where a link would not work, the page says where to go instead.
    visitor.goto(f"{pages.base}/player/Linky")
    row = f'.recent-table tr[data-race="{daily}"]'
    visitor.wait_for_selector(f"{row} a.daily-table-link")
    assert visitor.get_attribute(f"{row} a", "href") == "/daily/scotch"
    visitor.locator(".recent-panel").scroll_into_view_if_needed()
    both_widths(visitor, "links-player-recent")
    linky.goto(f"{pages.base}/race/{daily}/watch")
    linky.wait_for_selector(".race-refused >> text=/secret until the day is over/")
    assert linky.locator("#race-page").is_visible()  # her own race, from her own browser
    both_widths(linky, "links-daily-watch-refused")
    linky.goto(pages.base + "/")
    linky.wait_for_selector('.your-races-list [data-race="gone42"] >> text=gone')
    # Asking the server of the gone race is the home page's way to learn it is gone: the 404s
    # the browser logs for it are expected; no other error is.
    gone = "console: Failed to load resource: the server responded with a status of 404 (Not Found)"
    assert gone in pages.errors, pages.errors
    pages.errors[:] = [e for e in pages.errors if e != gone]
