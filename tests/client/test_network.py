"""Live on a bad network: a connection that dies silently is noticed within seconds, the page
says so, reconnects by itself and sends the pending move again with the same ``seq`` (applied
exactly once); moves made while others travel are drawn at once and go in order, and a move that
depends on a card not shown yet waits as a premove; a server that cannot save answers
``unavailable``, the page says so in a banner and the move goes through once saving works again."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import solrules

from tests.client.conftest import start_server
from tests.client.helpers import (
    WAIT_MS,
    Bot,
    Pages,
    both_widths,
    one_card_moves,
    own_cards,
    own_legal,
    own_seq,
    race_with_bot,
    scotch_seed_with_foundation_moves,
    top_card,
    wait_seq,
)
from tests.disk import fill, mounted_tmpfs

NewBot = Callable[[], Bot]


def server_moves(base: str, race: str, player: str = "p1") -> int:
    """The number of actions the server holds for ``player`` (from the race's API)."""
    with urllib.request.urlopen(f"{base}/api/races/{race}") as res:
        summary = json.load(res)
    return next(p for p in summary["players"] if p["player"] == player)["progress"]["moves"]


def click_to(page: Any, move: str) -> None:
    """Click the move's card, then its destination (no waiting for the server)."""
    src, dst = move.split(">")
    top_card(page, src).click()
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()


def independent_pair(legal: list[str]) -> tuple[str, str]:
    """Two one-card moves that touch four different piles."""
    moves = one_card_moves(legal)
    for a in moves:
        for b in moves:
            if not set(a.split(">")) & set(b.split(">")):
                return a, b
    raise AssertionError(f"no two independent moves in {legal}")


def test_a_silent_network_drop_is_noticed_and_the_move_goes_through_once(
    pages: Pages, new_bot: NewBot
) -> None:
    page, race = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    move = one_card_moves(own_legal(page))[0]
    seq = own_seq(page)
    # The network goes away without any close; the racer plays on.
    page.context.set_offline(True)
    click_to(page, move)
    page.wait_for_selector('#conn:is([data-state="offline"], [data-state="reconnecting"])',
                           timeout=WAIT_MS)
    page.wait_for_selector(".banner-warn >> text=/offline|reconnecting/i")
    page.wait_for_selector(
        f'.action-line >> text="Your move {move} will be sent when the connection is back."')
    assert own_seq(page) == seq + 1  # drawn at once...
    assert confirmed(page) == seq  # ...and not confirmed
    both_widths(page, "network-offline")
    # The network comes back: the move goes through by itself, once.
    page.context.set_offline(False)
    wait_seq(page, seq + 1, timeout=WAIT_MS * 2)
    page.wait_for_selector("#conn:empty", state="attached")
    page.wait_for_selector(".action-line", state="hidden")
    assert server_moves(pages.base, race) == seq + 1
    assert page.evaluate("window.solrace.session.inflight") is None


def confirmed(page: Any) -> int:
    """The actions of the racer the server has confirmed, as the page knows."""
    return page.evaluate("window.solrace.session.model.own.confirmed")


def test_a_socket_that_goes_quiet_is_given_up_and_the_lost_reply_is_not_a_second_move(
    pages: Pages, new_bot: NewBot
) -> None:
    page, race = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    move = one_card_moves(own_legal(page))[0]
    seq = own_seq(page)
    # From now on this socket hears nothing: the move reaches the server, its reply is lost.
    page.evaluate("""() => {
      const s = window.solrace.session;
      window.statuses = [];
      s.addEventListener("status", (e) => window.statuses.push([e.detail, performance.now()]));
      s.conn.ws.onmessage = null;
      document.addEventListener("click", () => { window.clickedAt = performance.now(); }, true);
    }""")
    click_to(page, move)
    # The page gives the socket up on its own (no close ever came) within a few seconds,
    # rejoins, and sends the move again with the same seq: the server does not apply it twice.
    wait_seq(page, seq + 1, timeout=WAIT_MS * 2)
    page.wait_for_selector("#conn:empty", state="attached")
    assert page.evaluate("window.solrace.session.conn.deaths") == 1
    statuses = page.evaluate("window.statuses")
    assert [s for s, _ in statuses][:2] == ["reconnecting", "open"], statuses
    noticed = statuses[0][1] - page.evaluate("window.clickedAt")
    assert noticed < 8000, f"a dead socket noticed after {noticed:.0f} ms"  # 4.5-5.5 s idle box
    assert server_moves(pages.base, race) == seq + 1
    # And play goes on as usual.
    nxt = one_card_moves(own_legal(page))[0]
    click_to(page, nxt)
    wait_seq(page, seq + 2)


HOLD_MOVES = """() => {
  // Moves wait on the way to the server until the test lets them go (window.releaseMoves()),
  // as on a slow network, but without a clock: the test decides when the reply may come.
  const c = window.solrace.session.conn;
  const send = c.sendRaw.bind(c);
  const held = [];
  let holding = true;
  c.sendRaw = (m) => (m.type === "move" && holding ? held.push(m) : send(m));
  window.releaseMoves = (keep) => {
    holding = !!keep;
    for (const m of held.splice(0)) if (c.ws) send(m);
  };
}"""


def uncovering(game: solrules.Game, premove_legal: bool) -> tuple[str, str] | None:
    """A Yukon move that uncovers a face-down card, and a one-card move onto that card that is
    (or is not) legal once the card is shown: (move, premove)."""
    board = {p["pile"]: p["cards"] for p in game.board()["piles"]}
    for move in game.legal_moves():
        src, dst = move.text().split("/")[0].split(">")
        if not src.startswith("t") or move.count != sum(c is not None for c in board[src]):
            continue
        if None not in board[src]:
            continue
        after = game.copy()
        after.push(move)
        legal = set(after.legal_by_text())
        for pile, cards in board.items():
            if pile in (src, dst) or not pile.startswith("t") or not cards:
                continue
            if (f"{pile}>{src}" in legal) == premove_legal:
                return move.text(), f"{pile}>{src}"
    return None


def yukon_premoves() -> tuple[int, list[tuple[str, str]]]:
    """A Yukon deal with three uncovering moves in a row: the first one's premove is legal
    once the card is shown (and played), the next two's are not."""
    for seed in range(1, 500):
        game = solrules.new_game("yukon", seed)
        found = []
        for want in (True, False, False):
            pair = uncovering(game, want)
            if pair is None:
                break
            found.append(pair)
            game.push_text(pair[0])
            if want:
                game.push_text(pair[1])
        if len(found) == 3:
            return seed, found
    raise AssertionError("no such deal")


def test_moves_in_flight_are_drawn_at_once_and_go_in_order(pages: Pages, new_bot: NewBot) -> None:
    page, race = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    first, second = independent_pair(own_legal(page))
    cards = {m: own_cards(page)[m.split(">")[0]][-1] for m in (first, second)}
    page.evaluate(HOLD_MOVES)
    click_to(page, first)
    # While the first move travels, the second is played on the board it left: both are drawn.
    click_to(page, second)
    # Drawn at the next frame, which a loaded machine may not have run yet when the click
    # returns: waited for (the server's replies are held, so "at once" still means before them).
    for move, card in cards.items():
        dst = move.split(">")[1]
        page.wait_for_selector(
            f'[data-board="own"] [data-pile="{dst}"] [data-depth="1"][data-card="{card}"]')
    assert page.evaluate("window.solrace.session.actions.length") == 2
    assert confirmed(page) == 0 and server_moves(pages.base, race) == 0
    # The replies come, in order: both confirmed, each applied once.
    page.evaluate("window.releaseMoves(false)")
    wait_seq(page, 2)
    assert server_moves(pages.base, race) == 2
    assert page.evaluate("window.solrace.session.divergences") == 0


def test_a_move_that_depends_on_a_hidden_card_waits_as_a_premove(
    pages: Pages, new_bot: NewBot
) -> None:
    seed, ((move, premove), (move2, bad), (move3, third)) = yukon_premoves()
    page, race = race_with_bot(pages, new_bot(), game="yukon", seed=str(seed))
    page.evaluate(HOLD_MOVES)

    def typed(text: str) -> None:
        page.fill("#move-input", text)
        page.press("#move-input", "Enter")

    # The move uncovers a card only the server can name: until it does, the board takes
    # premoves, and one onto that card waits.
    typed(move)
    src, dst = premove.split(">")
    page.wait_for_function(
        """(pile) => [...document.querySelectorAll(
             `[data-board="own"] [data-pile="${pile}"] .card`)].at(-1).matches(".down")""",
        arg=dst)
    assert page.evaluate("window.solrace.session.model.own.awaiting")
    click_to(page, premove)
    page.wait_for_selector(f'[data-board="own"] [data-pile="{src}"] .card.premove')
    page.wait_for_selector(f'[data-board="own"] [data-pile="{dst}"].premove-target')
    page.wait_for_selector(f'.action-line >> text=/^Premove: {premove}/')
    both_widths(page, "premove-queued")
    # The card comes; the premove is legal on it: played at once without another click.
    page.evaluate("window.releaseMoves(false)")
    wait_seq(page, 2, timeout=WAIT_MS * 2)
    assert server_moves(pages.base, race) == 2
    page.wait_for_selector(".card.premove", state="detached")
    # A premove the new card does not allow is dropped, and the page says so.
    page.evaluate("window.releaseMoves(true)")  # hold the next move again
    typed(move2)
    click_to(page, bad)
    page.wait_for_selector(f'.action-line >> text=/Premove: {bad}/')
    page.evaluate("window.releaseMoves(true)")
    page.wait_for_selector('.flash >> text="Premove cancelled"', timeout=WAIT_MS * 2)
    page.wait_for_selector(f'#announce-polite >> text=/Premove {bad} cancelled/', state="attached")
    wait_seq(page, 3)
    # Escape forgets a premove before it goes.
    typed(move3)
    click_to(page, third)
    page.wait_for_selector(f'.action-line >> text=/Premove: {third}/')
    page.locator('[data-board="own"] [data-pile="t1"]').focus()
    page.keyboard.press("Escape")
    assert page.evaluate("window.solrace.session.queued") is None
    page.evaluate("window.releaseMoves(false)")
    wait_seq(page, 4, timeout=WAIT_MS * 2)
    assert server_moves(pages.base, race) == 4
    assert page.evaluate("window.solrace.session.divergences") == 0


# ---------------------------------------------------------------- a server that cannot save
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 20 MiB tmpfs for the database, so that the test can fill it."""
    with mounted_tmpfs(tmp_path / "disk") as where:
        yield where


def test_a_move_the_server_cannot_save_waits_and_goes_through_later(
    browser: Any, small_disk: Path
) -> None:
    serving = start_server(small_disk / "races.db")
    base = next(serving)
    pages = Pages(browser, base)
    bot = Bot(base)
    try:
        page, race = race_with_bot(pages, bot, seed=str(scotch_seed_with_foundation_moves()))
        move = one_card_moves(own_legal(page))[0]
        filler = fill(small_disk)
        click_to(page, move)
        # The write fails: the server answers `unavailable` and tells everyone it is degraded.
        page.wait_for_selector("#service >> text=/Saving moves is unavailable right now/")
        page.wait_for_selector('.action-line >> text=/could not be saved yet/')
        assert own_seq(page) == 1 and confirmed(page) == 0  # drawn, not saved
        both_widths(page, "service-degraded")
        filler.unlink()
        # Saving works again: the banner goes, and the same move (same seq) is applied, once.
        page.wait_for_selector("#service", state="hidden", timeout=WAIT_MS * 2)
        wait_seq(page, 1, timeout=WAIT_MS * 2)
        assert server_moves(base, race) == 1
        assert pages.errors == [], "JavaScript errors in the browser"
    finally:
        bot.close()
        pages.close()
        serving.close()
