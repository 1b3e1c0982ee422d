"""Moves drawn at once: the racer's own board plays a legal move, an undo, in the frame of the
click, before the server has answered (its rules engine knows the outcome), and goes back exactly
to the server's position, saying why, when the server refuses. The moved cards slide from where
they were, unless the player asked for reduced motion. A Yukon move whose answer is lost gets the
card it turned up from the full state of the rejoin, which the page checks its board against.

The refusals here are the real server's: to make it refuse a move the page believes legal, the
test puts the page out of step with it (a seq one ahead of the server's count, or a position
with one more move than the server has), as a client that lost track would be."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import solrules

from tests.client.helpers import (
    WAIT_MS,
    Bot,
    Pages,
    one_card_moves,
    own_cards,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
    settle,
    top_card,
    wait_seq,
)
from tests.client.test_hidden_cards import flip_at_once, top_of
from tests.client.test_network import click_to, independent_pair

NewBot = Callable[[], Bot]

#: One way, as a server far away: what every message from the page waits before it leaves.
LATENCY_MS = 150

WATCH = """(latency) => {
  // Every message from the page leaves `latency` ms late, or (window.hold = true) waits until
  // window.release(); `window.log` records, in order, what the page drew and what it heard.
  const s = window.solrace.session;
  const c = s.conn;
  const send = c.sendRaw.bind(c);
  const held = [];
  window.hold = false;
  window.held = held;
  c.sendRaw = (m) => {
    if (m.type === "ping") return send(m);
    if (window.hold) held.push(m);
    else setTimeout(() => c.ws && send(m), latency);
  };
  window.release = () => {
    window.hold = false;
    for (const m of held.splice(0)) if (c.ws) send(m);
  };
  window.log = [];
  c.addEventListener("message", (e) => {
    const m = e.detail;
    if (m.type === "state" || m.type === "error") {
      window.log.push({ heard: m.type, code: m.code ?? null, seq: m.seq ?? null,
                        lean: !!m.lean, rid: m.rid ?? null });
    }
  });
  const board = document.querySelector('[data-board="own"]');
  window.cardsOf = (pile) => [...board.querySelectorAll(`[data-pile="${pile}"] [data-card]`)]
    .map((e) => e.dataset.card);
  window.watchPile = (pile, card) => {
    // The moment `card` lands on (or leaves) the top of `pile`, with what was animating then.
    let was = window.cardsOf(pile).at(-1) === card;
    new MutationObserver(() => {
      const is = window.cardsOf(pile).at(-1) === card;
      if (is === was) return;
      was = is;
      window.log.push({ drawn: pile, card, on: is, held: held.length,
                        flying: board.querySelectorAll(".card.flying").length,
                        animations: board.getAnimations({ subtree: true }).length });
    }).observe(board, { childList: true, subtree: true });
  };
}"""


def watch(page: Any, latency: int = LATENCY_MS) -> None:
    page.evaluate(WATCH, latency)


def log(page: Any) -> list[dict[str, Any]]:
    return page.evaluate("window.log")


def server_board(base: str, race: str, player: str = "p1") -> dict[str, list[str]]:
    """The racer's board as the server holds it (Scotch: every card face up), pile -> cards."""
    with urllib.request.urlopen(f"{base}/api/races/{race}") as res:
        summary = json.load(res)
    board = next(p for p in summary["players"] if p["player"] == player)["board"]
    return {p["pile"]: [c for c in p["cards"] if c] for p in board["piles"]}


def server_moves(base: str, race: str, player: str = "p1") -> int:
    with urllib.request.urlopen(f"{base}/api/races/{race}") as res:
        summary = json.load(res)
    return next(p for p in summary["players"] if p["player"] == player)["progress"]["moves"]


def scotch_race(pages: Pages, bot: Bot, **context: Any) -> tuple[Any, str]:
    return race_with_bot(pages, bot, seed=str(scotch_seed_with_foundation_moves()),
                         context=context or None)


def test_a_legal_move_is_drawn_before_the_server_answers(pages: Pages, new_bot: NewBot) -> None:
    page, race = scotch_race(pages, new_bot(), reduced_motion="no-preference")
    move = one_card_moves(own_legal(page))[0]
    src, dst = move.split(">")
    card = own_cards(page)[src][-1]
    watch(page)
    page.evaluate("([pile, card]) => window.watchPile(pile, card)", [dst, card])
    click_to(page, move)
    wait_seq(page, 1)
    events = log(page)
    drawn = next(i for i, e in enumerate(events) if e.get("drawn") == dst and e["on"])
    heard = next(i for i, e in enumerate(events) if e.get("heard") == "state")
    assert drawn < heard, events  # on the board before any answer came
    assert events[heard]["lean"]  # an answer that names no board: the page worked it out
    assert events[drawn]["flying"] == 1 and events[drawn]["animations"] >= 1  # and sliding there
    assert server_moves(pages.base, race) == 1
    assert own_cards(page) == server_board(pages.base, race)
    assert page.evaluate("window.solrace.session.divergences") == 0


def test_no_slide_with_reduced_motion(pages: Pages, new_bot: NewBot) -> None:
    page, _ = scotch_race(pages, new_bot(), reduced_motion="reduce")
    move = one_card_moves(own_legal(page))[0]
    src, dst = move.split(">")
    card = own_cards(page)[src][-1]
    watch(page)
    page.evaluate("([pile, card]) => window.watchPile(pile, card)", [dst, card])
    click_to(page, move)
    wait_seq(page, 1)
    drawn = next(e for e in log(page) if e.get("drawn") == dst)
    assert drawn["flying"] == 0 and drawn["animations"] == 0, drawn


def test_a_refused_move_goes_back_exactly_and_says_why(pages: Pages, new_bot: NewBot) -> None:
    page, race = scotch_race(pages, new_bot())
    first = one_card_moves(own_legal(page))[0]
    click_to(page, first)
    wait_seq(page, 1)
    truth = server_board(pages.base, race)
    assert own_cards(page) == truth
    # The page loses track of its count: its next moves go with a seq the server has not
    # reached. Two moves, both drawn at once, travel together.
    a, b = independent_pair(own_legal(page))
    cards = {m: own_cards(page)[m.split(">")[0]][-1] for m in (a, b)}
    watch(page)
    page.evaluate("([pile, card]) => window.watchPile(pile, card)", [a.split(">")[1], cards[a]])
    page.evaluate("window.hold = true; window.solrace.session.baseSeq += 1")
    click_to(page, a)
    click_to(page, b)
    settle(page)
    for m, card in cards.items():
        assert own_cards(page)[m.split(">")[1]][-1] == card
    assert page.evaluate("window.held.length") == 2
    page.evaluate("window.release()")
    # The server refuses the first (bad_seq), and so the second: the board goes back to the
    # server's position, exactly, and the reason is shown beside the pile.
    dst = a.split(">")[1]
    flash = page.locator(f'.flash[data-for="{dst}"]')
    flash.wait_for()
    assert "out of step" in flash.inner_text()
    assert page.locator(".move-msg").inner_text() == flash.inner_text()
    wait_seq(page, 1)
    assert own_cards(page) == truth == server_board(pages.base, race)
    events = log(page)
    assert [e["code"] for e in events if e.get("heard") == "error"] == ["bad_seq", "bad_seq"]
    drawn = [e["on"] for e in events if e.get("drawn") == dst]
    assert drawn == [True, False], events  # drawn at once, then taken back
    assert page.evaluate("window.solrace.session.divergences") == 0
    # Play goes on from there.
    click_to(page, a)
    wait_seq(page, 2)
    assert own_cards(page) == server_board(pages.base, race)


def test_a_board_out_of_step_takes_the_servers_position(pages: Pages, new_bot: NewBot) -> None:
    page, race = scotch_race(pages, new_bot())
    truth = server_board(pages.base, race)
    # The page believes a move was played that the server never saw, and plays a move that is
    # legal only after it: the server refuses it (illegal_move) with its reason; the page goes
    # back to the position before that move, then takes the server's on the rejoin that follows.
    legal = own_legal(page)
    pairs = page.evaluate(
        """async (legal) => {
          const E = await import("/static/engine/index.js");
          const s = window.solrace.session;
          for (const x of legal) {
            const after = E.play(s.base, x).pos;
            const next = E.legal(after).find((y) => !legal.includes(y) && !y.includes("/")
              && !y.startsWith(x.split(">")[1]) && y !== "s>w");
            if (next) return [x, next];
          }
          return null;
        }""", legal)
    assert pairs, "no move that only a move before it makes legal"
    ghost, move = pairs
    page.evaluate(
        """async (x) => {
          const E = await import("/static/engine/index.js");
          const s = window.solrace.session;
          s.base = E.play(s.base, x).pos;
          s.changed();
        }""", ghost)
    watch(page)
    page.fill("#move-input", move)
    page.press("#move-input", "Enter")
    page.wait_for_selector(".move-msg:not(:empty)")
    reason = page.locator(".move-msg").inner_text()
    assert reason and "out of step" not in reason
    page.wait_for_function("window.solrace.session.divergences === 1", timeout=WAIT_MS)
    wait_seq(page, 0)
    assert own_cards(page) == truth == server_board(pages.base, race)
    assert [e["code"] for e in log(page) if e.get("heard") == "error"] == ["illegal_move"]
    assert own_legal(page) == legal


def test_undo_is_drawn_at_once(pages: Pages, new_bot: NewBot) -> None:
    page, race = scotch_race(pages, new_bot())
    before = own_cards(page)
    move = one_card_moves(own_legal(page))[0]
    src = move.split(">")[0]
    card = before[src][-1]
    watch(page)
    page.evaluate("([pile, card]) => window.watchPile(pile, card)", [src, card])
    # A move and its undo while nothing reaches the server: both drawn at once.
    page.evaluate("window.hold = true")
    click_to(page, move)
    page.click("#undo")
    settle(page)
    assert own_cards(page) == before
    assert page.evaluate("window.held.map(m => m.type)") == ["move", "undo"]
    drawn = [(e["on"], e["held"]) for e in log(page) if e.get("drawn") == src]
    assert drawn == [(False, 1), (True, 2)], drawn  # each drawn before it left the page
    page.evaluate("window.release()")
    wait_seq(page, 2)
    assert [e["lean"] for e in log(page) if e.get("heard") == "state"] == [True, True]
    assert server_moves(pages.base, race) == 2
    assert own_cards(page) == before == server_board(pages.base, race)
    # An undo of a move the server has confirmed, the same.
    click_to(page, move)
    wait_seq(page, 3)
    page.evaluate("window.hold = true")
    page.keyboard.press("u")
    page.wait_for_function("window.solrace.session.model.own.seq === 4")
    settle(page)
    assert own_cards(page) == before
    assert top_card(page, src).get_attribute("data-card") == card
    page.evaluate("window.release()")
    wait_seq(page, 4)
    assert own_cards(page) == server_board(pages.base, race)
    assert page.evaluate("window.solrace.session.divergences") == 0


def test_a_lost_answer_the_full_state_of_the_rejoin_names_the_card(
    pages: Pages, new_bot: NewBot
) -> None:
    seed, move, card = flip_at_once(range(32000, 32400))
    src = move.split(">")[0]
    page, race = race_with_bot(pages, new_bot(), game="yukon", seed=str(seed))
    watch(page, 0)
    # The move reaches the server; its answer (the card it turned up) is lost with the socket.
    page.evaluate("window.solrace.session.conn.ws.onmessage = null")
    page.fill("#move-input", move)
    page.press("#move-input", "Enter")
    page.wait_for_function("window.solrace.session.model.own.awaiting")
    # The page gives the socket up, rejoins, and the rejoin's full state names the card: the
    # board it drew is the server's, with the card in its place, and the move counts once.
    wait_seq(page, 1, timeout=WAIT_MS * 3)
    assert top_of(page, "own", src) == card
    assert not page.evaluate("window.solrace.session.model.own.awaiting")
    assert [e["lean"] for e in log(page) if e.get("heard") == "state"][:1] == [False]
    assert server_moves(pages.base, race) == 1
    assert page.evaluate("window.solrace.session.divergences") == 0
    assert own_legal(page) == legal_after(seed, move)


def legal_after(seed: int, move: str) -> list[str]:
    """The legal moves of a Yukon deal after ``move``, as solrules lists them."""
    game = solrules.new_game("yukon", seed)
    game.push_text(move)
    return list(game.legal_by_text())
