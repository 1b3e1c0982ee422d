"""The views rule in the browser: a card one racer turns up is a back on the other racer's page
and on the spectator page until the other racer has uncovered it; bots are labelled."""

from __future__ import annotations

from collections.abc import Callable

import solrules

from tests.client.helpers import WAIT_MS, Bot, Pages, create_race, screenshot, settle, wait_seq

NewBot = Callable[[], Bot]


def flip_at_once(seed_range: range) -> tuple[int, str, str]:
    """A Yukon deal with a move that turns a face-down card up from the deal: (seed, move,
    the card it turns up)."""
    for seed in seed_range:
        game = solrules.new_game("yukon", seed)
        for move in game.legal_moves():
            down = game.face_down(move.src)
            if move.src.startswith("t") and down and len(game.cards(move.src)) - move.count == down:
                return seed, move.text(), game.cards(move.src)[down - 1]
    raise AssertionError("no such deal")


def top_of(page: object, board: str, pile: str) -> str | None:
    """The top card of a pile on a rendered board: its text, or None for a back."""
    return page.evaluate(  # type: ignore[attr-defined, no-any-return]
        """([board, pile]) => {
             const cards = document.querySelectorAll(
               `[data-board="${board}"] [data-pile="${pile}"] .card`);
             const top = cards[cards.length - 1];
             return top && !top.classList.contains('down') ? top.dataset.card : null; }""",
        [board, pile],
    )


def test_a_card_turned_up_by_a_bot_is_a_back_for_the_others(
    pages: Pages, server: str, new_bot: NewBot
) -> None:
    seed, move, card = flip_at_once(range(32000, 32400))
    src = move.split(">")[0]
    created = create_race(server, game="yukon", players=2, seed=str(seed))
    race = created["race"]
    racer = pages.open(f"/race/{race}")
    racer.fill("#racer-name", "Yuki")
    racer.click("text=Join race")
    racer.wait_for_selector("text=You're in, Yuki.")
    bot = new_bot()
    bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
    racer.wait_for_selector('.lobby-list .bot-tag')  # the lobby labels the bot (p2)
    watcher = pages.open(f"/race/{race}/watch")
    bot.request({"type": "start", "race": race, "token": created["host_token"]})
    for page in (racer, watcher):
        page.wait_for_selector('[data-board="p2"] [data-card]', timeout=WAIT_MS)
    bot.wait_state()
    bot.request({"type": "move", "race": race, "move": move, "seq": 1})
    # The bot's board changes (the cards moved), but its new top card on src stays a back.
    for page in (racer, watcher):
        page.wait_for_function(
            """([pile, n]) => document.querySelectorAll(
                 `[data-board="p2"] [data-pile="${pile}"] .card`).length === n""",
            arg=[src, len(solrules.new_game("yukon", seed).cards(src)) - int(move.split("/")[1])
                 if "/" in move else len(solrules.new_game("yukon", seed).cards(src)) - 1],
            timeout=WAIT_MS,
        )
        settle(page)
        assert top_of(page, "p2", src) is None, "the card the bot turned up is hidden"
    assert not racer.locator(f'[data-board="p2"] [data-card="{card}"]').count()
    # Both pages label the bot, and the spectator page says once why cards are hidden.
    assert racer.locator('[data-player="p2"] .bot-tag').is_visible()
    assert watcher.locator('[data-player="p2"] .bot-tag').is_visible()
    assert watcher.locator('[data-note="hidden-cards"]').count() == 1
    assert watcher.locator('[data-note="hidden-cards"]').is_visible()
    screenshot(racer, "hidden-cards-racer-before")
    screenshot(watcher, "hidden-cards-watch-before")
    # The racer makes the same move (typed): now he has seen the card, and so has every racer
    # still racing, so both pages show it.
    racer.fill("#move-input", move)
    racer.press("#move-input", "Enter")
    wait_seq(racer, 1)  # drawn at once; the card it turns up comes with the server's answer
    assert top_of(racer, "own", src) == card
    for page in (racer, watcher):
        page.wait_for_function(
            """([pile, card]) => { const cs = document.querySelectorAll(
                 `[data-board="p2"] [data-pile="${pile}"] .card`);
                 return cs.length && cs[cs.length - 1].dataset.card === card; }""",
            arg=[src, card],
            timeout=WAIT_MS,
        )
    screenshot(watcher, "hidden-cards-watch-after")
    bot.request({"type": "resign", "race": race})  # a race of two: it ends
    racer.wait_for_selector(".standings-table .bot-tag", timeout=WAIT_MS)  # results label it too
