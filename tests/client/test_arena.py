"""Arenas in the browser (issue 29): an account makes an arena that starts in a few seconds; two
players join from its page (one a guest who came from the home page's list of arenas: his races are
casual, and the page says how to play rated) while it counts down; at the start both are taken to
their race; one plays three moves and resigns (a resign loses): the other has 2 points in the
table, the bars of both say "Next pairing…" over the results, and they are paired again; the arena
ends after the race under way at its end, with its podium. An entrant whose page was closed is
paused (his page says Resume); one who looks at another page when he is paired is called to his
race. Over two processes on Redis, two players on two processes race in an arena one of them
runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import start_server
from tests.client.contrast import whole_page_failures
from tests.client.helpers import DESKTOP, WAIT_MS, Pages, both_widths, settle, wait_seq
from tests.client.test_fairplay import account
from tests.solrace.servers import RedisServer, Solrace

# The test server's arenas: a "minute" of pairing lasts 15 s (an arena of 3 minutes ends within a
# test), and those who wait are paired 3 s after the second began to wait (not 1 s): long enough
# to look at the results under "Next pairing…". Nothing else of the server changes.
PRELUDE = ("import solrace.core.arena as a; a.PAIR_EVERY_MS = 3000; "
           "a.ArenaSettings.ends_at = property(lambda s: s.starts_at + s.minutes * 15000)")

# Every text the arena bar says in its live region, in order, with whether the race's results
# were on the page when it said it (kept from now on: the page moves on to the next race by
# itself, a test could look too late).
RECORD_BAR = """() => {
  window.barSaid = [];
  const look = () => {
    const text = document.querySelector('.a-bar-next')?.textContent || '';
    const last = window.barSaid[window.barSaid.length - 1];
    const results = !!document.querySelector('.results-host .results');
    if (text && (!last || last.text !== text)) {
      window.barSaid.push({text, results});
    } else if (text && results) {
      last.results = true;  // the results drawn after the words (their own message)
    }
  };
  new MutationObserver(look).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


# Fifty racers ahead of the viewer (the first on a streak of three), and the viewer 51st: what the
# server sends a follower of an arena of 51 (its first 50 rows) and the viewer (`you`).
BIG_TABLE = """() => {
  const s = window.solrace.arena;
  const m = s.model;
  m.standings = Array.from({ length: 50 }, (_, i) => ({ place: i + 1, player: `plracer${i}`,
    name: `Racer ${i + 1}`, points: 120 - 2 * i, races: 9, wins: 5, streak: i === 0 ? 3 : 0,
    racing: i % 2 === 0, paused: i === 7, form: 'WWLWW' }));
  m.entrants = 51;
  m.you = { place: 51, player: 'plviewer', name: 'Viewer', points: 0, races: 0, wins: 0, streak: 0,
    racing: false, paused: false, form: '', race: null };
  m.youV = m.v;
  s.changed();
}"""


@pytest.fixture(scope="module")
def arena_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own: the house keeps no arenas on it, and its arenas are short (no pool
    of winnable deals: an arena deals any deal)."""
    yield from start_server(tmp_path_factory.mktemp("arena-server") / "races.db",
                            "--arenas", "off", prelude=PRELUDE)


@pytest.fixture
def pages(browser: Any, arena_server: str) -> Iterator[Pages]:
    p = Pages(browser, arena_server)
    try:
        yield p
        assert p.errors == [], "JavaScript errors in the browser"
    finally:
        p.close()


def create_arena(page: Any, **settings: Any) -> str:
    """``arena_create`` as the page's player (an account), on a connection of the page's own."""
    return str(page.evaluate("""async (settings) => {
      const { Connection } = await import('/static/net.js');
      const conn = new Connection();
      conn.connect();
      await conn.whenOpen();
      try {
        return (await conn.request({ type: 'arena_create', ...settings })).arena;
      } finally {
        conn.close();
      }
    }""", {"game": "scotch", "time_limit": 300, **settings}))


def guest(page: Any, name: str) -> None:
    """The page's player is a guest named ``name`` (no password)."""
    page.wait_for_function("window.solrace?.me?.loaded")
    page.evaluate("(n) => window.solrace.me.setName(n)", name)
    page.wait_for_function("window.solrace.me.player?.name")


def join(page: Any) -> None:
    """Join with the page's one button; it then offers to pause."""
    page.wait_for_selector("#arena-join >> text=Join the arena")
    page.click("#arena-join")
    page.wait_for_selector("#arena-join >> text=Pause")


def seated(page: Any, not_in: str = "") -> str:
    """The page went to a race of the arena (other than ``not_in``) and its board is dealt; the
    race's id."""
    page.wait_for_function(
        "(old) => location.pathname.startsWith('/race/') && location.pathname !== old",
        arg=f"/race/{not_in}" if not_in else "", timeout=WAIT_MS * 3)
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
    page.wait_for_function("window.solrace.session?.model.own?.legal?.length > 0", timeout=WAIT_MS)
    settle(page)
    return str(page.evaluate("window.solrace.session.race"))


def three_moves(page: Any) -> None:
    for seq in range(1, 4):
        legal = page.evaluate("window.solrace.session.model.own.legal")
        move = next((m for m in legal if ">f" in m), legal[0])
        page.evaluate("(m) => window.solrace.session.move(m)", move)
        wait_seq(page, seq)


def resign(page: Any) -> None:
    page.click("#resign")
    page.click("#resign")  # "Really resign?"


def row_of(page: Any, name: str) -> Any:
    return page.locator(".table-panel .arena-table tbody tr", has_text=name)


def assert_contrast(page: Any, name: str) -> None:
    settle(page)
    bad = whole_page_failures(page)
    assert not bad, f"{name}: text below WCAG AA contrast: {bad}"


def test_an_arena_from_its_page_to_the_podium(pages: Pages) -> None:
    ann = pages.open("/")
    account(ann, "Ann")
    aid = create_arena(ann, minutes=3, starts_in=15, name="Friday Arena")
    ann.goto(f"{pages.base}/arena/{aid}")
    ann.wait_for_selector("h1 >> text=Friday Arena")
    facts = ann.locator(".a-facts").inner_text()
    assert "Scotch" in facts and "races of 5 min" in facts and "rated" in facts
    assert "made by a player" in facts
    ann.wait_for_selector(".a-clock >> text=/Starts in 0:[01]\\d/")
    assert "Rated: your races here change your rating" in ann.locator(".a-guest-note").inner_text()
    watcher = pages.open(f"/arena/{aid}")  # nobody's entrant: he sees the table live
    watcher.wait_for_selector(".a-empty >> text=Nobody has joined yet")
    join(ann)
    # Bob comes from the home page: the arena is listed there with its countdown, one click away
    # (the list is refreshed every 15 s, and cached 2 s by the server: he may look twice).
    bob = pages.open("/")
    listed = bob.locator(f'.arenas .arena-row[data-arena="{aid}"]')
    for _ in range(5):
        if listed.count():
            break
        bob.wait_for_timeout(1000)
        bob.reload()
    listed.wait_for(timeout=WAIT_MS)
    assert "starts in" in listed.locator(".arena-when").inner_text()
    assert "Scotch" in listed.locator(".arena-game").inner_text()
    listed.locator("a.arena-name", has_text="Friday Arena").click()
    bob.wait_for_selector("h1 >> text=Friday Arena")
    guest(bob, "Bob")
    bob.wait_for_selector(".a-guest-note >> text=/As a guest your races here are casual: set a "
                          "password/")
    join(bob)
    # Both in: the table before the start, each one's own row marked.
    for page, me in ((ann, "Ann"), (bob, "Bob")):
        page.wait_for_selector(".arena-table tbody tr:nth-child(2)")
        assert row_of(page, me).get_attribute("class") == "is-you"
    watcher.wait_for_selector(".table-panel h2 >> text=Entrants (2)")
    assert "Starts in" in bob.locator(".a-clock").inner_text()
    both_widths(ann, "arena-upcoming")
    assert_contrast(ann, "arena-upcoming")
    for page in (ann, bob):
        page.evaluate(RECORD_BAR)  # the page stays: the race opens in it, with its bar
    # The start: each is taken to the race they are paired in.
    race = seated(ann)
    assert seated(bob) == race
    for page in (ann, bob):
        page.wait_for_selector(".arena-bar .a-bar-link >> text=Friday Arena")
        assert page.locator("#arena-call").count() == 0  # taken there: no call to go
        page.wait_for_selector(".arena-bar .a-bar-clock >> text=/Arena ends in/")
    assert ann.locator(".arena-bar .a-bar-link").get_attribute("href") == f"/arena/{aid}"
    watcher.wait_for_selector(".table-panel h2 >> text=Live table")
    assert row_of(watcher, "Ann").locator(".tag-racing").count() == 1
    assert_contrast(watcher, "arena-live")
    both_widths(bob, "arena-race")
    assert_contrast(bob, "arena-race")
    # Bob plays three moves and resigns: he loses, Ann wins 2 points.
    three_moves(bob)
    resign(bob)
    ann.wait_for_selector(".arena-bar .a-bar-you >> text=2 points · 1st of 2", timeout=WAIT_MS)
    bob.wait_for_selector(".arena-bar .a-bar-you >> text=0 points · 2nd of 2", timeout=WAIT_MS)
    watcher.wait_for_function(
        "() => [...document.querySelectorAll('.arena-table tbody tr')].map(r => r.innerText)"
        ".some(t => t.includes('Ann') && t.includes('2'))")
    assert row_of(watcher, "Ann").locator(".points").inner_text() == "2"
    assert row_of(watcher, "Bob").locator(".points").inner_text() == "0"
    assert row_of(watcher, "Ann").locator(".form-chip").all_inner_texts() == ["W"]
    # After the race: "Next pairing…" over the results, until the next pairing takes both on.
    for page in (ann, bob):
        page.wait_for_function(
            "window.barSaid.some(s => s.text === 'Next pairing…' && s.results)", timeout=WAIT_MS)
    both_widths(bob, "arena-next-pairing")
    again = seated(ann, not_in=race)
    assert seated(bob, not_in=race) == again != race
    # Its time runs out during this race; the race counts, and then the arena is over.
    ann.wait_for_selector(".arena-bar .a-bar-clock >> text=/this is your last race/",
                          timeout=WAIT_MS * 6)
    three_moves(ann)
    resign(ann)
    for page in (ann, bob):
        page.wait_for_selector(".arena-bar .a-bar-next >> text=The arena is over", timeout=WAIT_MS)
    ann.click(".arena-bar .a-bar-back")
    ann.wait_for_selector(".podium", timeout=WAIT_MS)
    first = ann.locator('.podium-step[data-place="1"]').inner_text()
    second = ann.locator('.podium-step[data-place="2"]').inner_text()
    # Two points each, one win each: Ann reached hers first.
    assert "Ann" in first and "2 points" in first and "Bob" in second and "2 points" in second
    assert ann.locator(".table-panel h2").inner_text() == "Final table"
    assert ann.locator("#arena-join").is_hidden()
    ann.wait_for_selector(".a-status >> text=Finished")
    both_widths(ann, "arena-podium", full_page=True)
    assert_contrast(ann, "arena-podium")
    watcher.wait_for_selector(".podium")


def test_the_table_turns_live_at_the_start_by_the_clock(pages: Pages) -> None:
    """One entrant: nobody to pair at the start, so no message need come then; the page's
    clock starts the arena, and the table's title follows ("Live table", not "Entrants")."""
    ann = pages.open("/")
    account(ann, "Ann")
    aid = create_arena(ann, minutes=3, starts_in=4, name="Lone Arena")
    ann.goto(f"{pages.base}/arena/{aid}")
    join(ann)
    watcher = pages.open(f"/arena/{aid}")
    watcher.wait_for_selector(".table-panel h2 >> text=Entrants (1)")
    watcher.wait_for_selector(".a-clock >> text=/Ends in/", timeout=WAIT_MS * 2)
    assert watcher.locator(".table-panel h2").inner_text() == "Live table"


def test_a_reload_keeps_her_in_pause_resume_and_a_call_from_another_page(pages: Pages) -> None:
    ann = pages.open("/")
    account(ann, "Ada")
    aid = create_arena(ann, minutes=5, starts_in=12, name="Call Arena")
    ann.goto(f"{pages.base}/arena/{aid}")
    join(ann)
    # Her only page opens anew (a reload): back within the server's grace (AWAY_MS, 10 s), she
    # is still in; the page binds its connection to her again and offers Pause.
    ann.reload()
    ann.wait_for_selector('#arena-join >> text=Pause')
    assert row_of(ann, "Ada").locator(".tag-paused").count() == 0
    # She pauses: the page says so, her row is marked, and Resume brings her back.
    ann.click("#arena-join")
    ann.wait_for_selector("#arena-join >> text=Resume")
    ann.wait_for_selector(".you-state >> text=You are paused")
    row_of(ann, "Ada").locator(".tag-paused").wait_for()
    ann.click("#arena-join")
    ann.wait_for_selector("#arena-join >> text=Pause")
    row_of(ann, "Ada").locator(".tag-paused").wait_for(state="detached")
    ann.click("#arena-join")
    ann.wait_for_selector("#arena-join >> text=Resume")
    ann.click("#arena-join")
    ann.wait_for_selector("#arena-join >> text=Pause")
    # Bob joins, then looks at another page of the site: he is still in.
    bob = pages.open(f"/arena/{aid}")
    guest(bob, "Ben")
    join(bob)
    bob.evaluate("window.solrace.navigate('/leaderboard/scotch')")
    bob.wait_for_selector(".leaderboard-page")
    # The start: Ada is taken to the race; Ben, elsewhere, is called (the race starts once both
    # sat).
    ann.wait_for_url("**/race/*", timeout=WAIT_MS * 3)
    bob.wait_for_selector("#arena-call >> text=Your race in Call Arena is ready",
                          timeout=WAIT_MS * 2)
    assert bob.url.endswith("/leaderboard/scotch")
    both_widths(bob, "arena-call")
    assert_contrast(bob, "arena-call")
    bob.click("#arena-call-go")
    race = seated(ann)
    assert seated(bob) == race
    assert bob.locator("#arena-call").count() == 0
    bob.wait_for_selector(".arena-bar .a-bar-link >> text=Call Arena")
    # His race page opened anew (a reload: his only connections closed while he raced): its bar
    # follows the arena as him again, so the end of the race does not pause him.
    bob.reload()
    bob.wait_for_selector('.arena-bar[data-entrant="true"]', timeout=WAIT_MS)
    bob.evaluate(RECORD_BAR)
    three_moves(ann)
    resign(ann)
    bob.wait_for_function("window.barSaid.some(s => s.text === 'Next pairing…' && s.results)",
                          timeout=WAIT_MS)
    again = seated(bob, not_in=race)
    assert seated(ann, not_in=race) == again
    # The table of a big arena: the first 50 rows, and the viewer's own row under them (the
    # model as the server would send it, drawn by the page of a visitor).
    big = pages.open(f"/arena/{aid}")
    big.wait_for_selector(".table-panel h2 >> text=Live table")
    big.evaluate(BIG_TABLE)
    big.wait_for_selector(".you-below .arena-table tr.is-you >> text=51st")
    assert big.locator(".table-panel > .standings .arena-table tbody tr").count() == 50
    assert big.locator(".table-note").inner_text() == "The first 50 of 51 racers."
    assert "3 wins in a row" in big.locator(".streak-mark").first.inner_text()
    assert "You're in: 0 points · 51st of 51" in big.locator(".you-line").inner_text()
    both_widths(big, "arena-big-table")
    assert_contrast(big, "arena-big-table")


# ------------------------------------------------------------------- over two processes
@pytest.fixture
def two_processes(tmp_path: Path) -> Iterator[list[str]]:
    """Two ``solrace serve`` processes on one Redis (no house arenas): their base URLs."""
    redis = RedisServer(tmp_path / "redis")
    procs = [Solrace(redis.url, "--arenas", "off") for _ in range(2)]
    try:
        for proc in procs:
            proc.start_blocking()
        yield [proc.http for proc in procs]
    finally:
        for proc in procs:
            proc.stop()
        redis.stop()


def open_at(pages: Pages, base: str, path: str) -> Any:
    """A watched page (console errors fail the test) of the server at ``base``."""
    context = pages.browser.new_context(viewport=DESKTOP, bypass_csp=True, reduced_motion="reduce")
    context.set_default_timeout(WAIT_MS * 2)
    pages.contexts.append(context)
    page = context.new_page()
    page.on("console", pages._console)
    page.on("pageerror", lambda exc: pages.errors.append(f"pageerror: {exc}"))
    page.goto(base + path)
    return page


def test_an_arena_over_two_processes(browser: Any, two_processes: list[str]) -> None:
    first, second = two_processes
    pages = Pages(browser, first)
    try:
        ann = open_at(pages, first, "/")
        account(ann, "Ann")
        aid = create_arena(ann, minutes=5, starts_in=6, name="Shared Arena")  # run by the first
        ann.goto(f"{first}/arena/{aid}")
        bob = open_at(pages, second, f"/arena/{aid}")  # on the other process
        guest(bob, "Bob")
        join(ann)
        join(bob)
        bob.wait_for_selector(".arena-table tbody tr:nth-child(2)")
        race = seated(ann)
        assert seated(bob) == race
        three_moves(bob)
        resign(bob)
        bob.wait_for_selector(".arena-bar .a-bar-you >> text=0 points · 2nd of 2", timeout=WAIT_MS)
        ann.wait_for_selector(".arena-bar .a-bar-you >> text=2 points · 1st of 2", timeout=WAIT_MS)
        # Paired again at once (these servers pair within 0.1 s, not the 3 s of PRELUDE): the
        # results under "Next pairing…" may be gone before they are drawn, so they are looked
        # at in the test above, not here.
        again = seated(bob, not_in=race)
        assert seated(ann, not_in=race) == again
        # Bob's page on the second process follows the arena as him: his table, from there.
        bob.click(".arena-bar .a-bar-back")
        bob.wait_for_selector(".you-state >> text=Your race is ready")
        assert row_of(bob, "Ann").locator(".points").inner_text() == "2"
        assert pages.errors == [], pages.errors
    finally:
        pages.close()
