"""The solver in race pages: a race created with hints from the home page, the Hint button (and
the H key) marking a legal move on the board while saying it thinks, hint counts for everyone,
par on the results; a certified-winnable deal has its par at once."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from tests.client.helpers import (
    WAIT_MS,
    Bot,
    Pages,
    both_widths,
    join_as,
    own_legal,
    own_seq,
    scotch_seed_with_foundation_moves,
    wait_seq,
)

NewBot = Callable[[], Bot]

HINTED_MOVE = """() => {
  const cards = [...document.querySelectorAll('[data-board="own"] .card.hinted')];
  const target = document.querySelector('[data-board="own"] .pile.hint-target');
  if (!cards.length || !target) return null;
  const from = cards[0].closest('[data-pile]').dataset.pile;
  const to = target.dataset.pile;
  return cards.length > 1 ? `${from}>${to}/${cards.length}` : `${from}>${to}`;
}"""

# Records every text the Hint button shows, so that a quick answer cannot hide "Thinking…".
WATCH_BUTTON = """() => {
  const b = document.querySelector('#hint');
  window.hintTexts = [b.textContent];
  new MutationObserver(() => window.hintTexts.push(b.textContent))
    .observe(b, {childList: true, characterData: true, subtree: true});
}"""


def create_from_home(pages: Pages, **checks: Any) -> tuple[Any, str]:
    """Create a two-racer race from the home page's form, ticking the ``checks`` boxes (by id)
    and typing a ``seed`` if given; the page (the race's lobby, as host) and the race id."""
    page = pages.open("/")
    seed = checks.pop("seed", None)
    for box in checks:
        page.check(f"#{box}")
    if seed is not None:
        page.click("summary >> text=Choose the deal")
        page.fill("#seed", str(seed))
    page.click("text=Create race")
    page.wait_for_selector("#start")
    return page, page.url.rstrip("/").rsplit("/", 1)[1]


def start_with_bot(page: Any, bot: Bot, race: str) -> None:
    join_as(page, "Ann")
    bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
    page.click("#start")
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    page.wait_for_function("window.solrace.session.model.own?.legal.length > 0")


def ask_hint(page: Any, how: str = "click") -> str:
    """Ask for a hint and return the move marked on the board (and said in the hint line)."""
    # A starved solver (a busy machine) says so, or the page's socket was given up while the
    # hint was worked out (its heartbeat is short): the racer asks again, as a player would.
    for _ in range(5):
        page.evaluate(WATCH_BUTTON)
        if how == "click":
            page.click("#hint")
        else:
            page.locator('[data-board="own"] [data-pile][tabindex="0"]').focus()
            page.keyboard.press("h")
        page.wait_for_function(
            """(() => { const l = document.querySelector('.hint-line');
                        return l && l.dataset.kind !== 'thinking'
                          && (!l.hidden || l.dataset.kind === 'refused'); })()""",
            timeout=WAIT_MS * 2)
        refused = page.get_attribute(".hint-line", "data-kind") == "refused"
        if not refused and "solver is busy" not in page.inner_text(".hint-line"):
            break
        page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
        page.wait_for_timeout(1000)
    assert page.get_attribute(".hint-line", "data-kind") == "move", page.inner_text(".hint-line")
    assert "Thinking…" in page.evaluate("window.hintTexts")  # it said so while it thought
    page.wait_for_selector('[data-board="own"] .pile.hint-target')  # drawn in the next frame
    move = page.evaluate(HINTED_MOVE)
    said = re.search(r"\(([^()]+)\)\.?$", page.inner_text(".hint-line"))
    assert said and said.group(1) == move, page.inner_text(".hint-line")
    return move


def test_hint_marks_a_legal_move_and_is_counted(pages: Pages, new_bot: NewBot) -> None:
    """A hint's cost is said as text: on the button before the click (time if you finish, a
    card if you don't), on the racer's standing after it, and on the results of a racer who
    did not finish, as the cards it cost him (not a time he does not have)."""
    page, race = create_from_home(pages, hints=True, seed=scotch_seed_with_foundation_moves())
    page.wait_for_selector(".lobby .hints-tag >> text=hints allowed")
    bot = new_bot()
    start_with_bot(page, bot, race)
    watcher = pages.open(f"/race/{race}/watch")
    watcher.wait_for_selector('[data-board="p1"] [data-card]')
    assert page.inner_text("#hint") == "Hint (+30 s or −1 card)"

    move = ask_hint(page)
    assert move in own_legal(page)  # the suggestion is a legal move here...
    page.wait_for_selector(".chip.is-you .chip-hints >> text=1 hint (+30 s or −1 card)")
    assert page.inner_text("#hint") == "Hint (+30 s or −1 card)"  # the next one costs the same
    watcher.wait_for_selector('[data-player="p1"] .player-meta >> text=/1 hint$/')
    both_widths(page, "solver-hint")
    seq = own_seq(page)
    page.evaluate("(m) => window.solrace.session.move(m)", move)  # ...and the server takes it
    wait_seq(page, seq + 1)
    assert page.locator('[data-board="own"] .card.hinted').count() == 0  # the hint is spent
    assert page.locator(".hint-line").is_hidden()

    # The same again from the keyboard (H), at the new position: a second hint is counted.
    second = ask_hint(page, how="key")
    assert second in own_legal(page)
    page.wait_for_selector(".chip.is-you .chip-hints >> text=2 hints (+60 s or −2 cards)")
    both_widths(page, "solver-hint-cost")

    # Over: the results count the hints and give the deal's par, next to the moves. He won
    # (the bot resigned) without finishing the deal: his hints cost him cards, not time.
    bot.request({"type": "resign", "race": race})  # a race of two: it ends
    page.wait_for_selector(".standings-table td.hints")
    row = page.locator('.standings-table tr[data-player="p1"]')
    assert row.locator("td.hints").inner_text() == "2"
    cards = row.locator("td.cards").inner_text()
    assert re.fullmatch(r"\d+ / 52\s+\(−2 for 2 hints\)", cards), cards
    assert row.locator("td.num").nth(0).inner_text() == "–"  # no "+60 s" beside no time
    page.wait_for_selector(".par-line >> text=/^Par: (\\d+ moves|unwinnable|not found)/",
                           timeout=WAIT_MS * 4)
    par = page.inner_text(".par-line")
    if par.startswith("Par: ") and "moves" in par:
        moves = re.search(r"\d+", par).group(0)
        assert row.locator(".par-note").inner_text().strip() == f"/ par {moves}"
    both_widths(page, "solver-results-par", full_page=True)


def test_winnable_deal_has_its_par_at_once(pages: Pages, new_bot: NewBot) -> None:
    # The server solves its private pool at start: wait for a Scotch deal to be ready.
    deadline = time.monotonic() + WAIT_MS / 1000 * 6
    while True:
        games = {g["game"]: g for g in json.loads(urllib.request.urlopen(
            f"{pages.base}/api/games", timeout=5).read())}
        if games["scotch"]["winnable"] > 0:
            break
        assert time.monotonic() < deadline, f"no winnable deal solved: {games['scotch']}"
        time.sleep(0.2)
    page, race = create_from_home(pages, winnable=True)
    page.wait_for_selector(".lobby .winnable-tag >> text=certified-winnable deal")
    bot = new_bot()
    start_with_bot(page, bot, race)
    assert page.locator("#hint").is_hidden()  # this race has no hints
    bot.request({"type": "resign", "race": race})  # a race of two: it ends
    # The catalogue knows the par: it comes with race_over, no solving after the reveal.
    page.wait_for_selector(".par-line >> text=/^Par: \\d+ moves/", timeout=WAIT_MS)
