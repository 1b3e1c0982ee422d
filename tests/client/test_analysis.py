"""Post-race analysis in the browser: a racer who made a losing move sees it marked on his
replay (the timeline's red marker, the results' line, "the deal was lost here" at that move),
the move that would have kept the deal winnable (named on the results, marked on the board) and
his accuracy; "Play on from here" starts a practice game from the position shown, or from the
last winnable one when that is lost, played in the browser alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import solrules
from solrace.solver.worker import replay

from tests.client.contrast import whole_page_failures
from tests.client.helpers import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    board_cards,
    click_move,
    race_with_bot,
    screenshot,
    settle,
    wait_seq,
)
from tests.solrace.test_analysis import BEFORE, LOSING, SEED

NewBot = Callable[[], Bot]


def losing_race(pages: Pages, bot: Bot) -> tuple[Any, str]:
    """Ann (the browser) plays the line of BEFORE, then the losing move with the mouse, and
    resigns (the race ends: its only human racer is done): the results page, and the race."""
    # The fixture's facts, checked with the solver: winnable before the move, lost after it.
    game = replay("scotch", SEED, BEFORE)
    assert solrules.solve(game, solrules.Budget(20_000)).verdict == "won"
    page, race = race_with_bot(pages, bot, seed=str(SEED))
    for seq, text in enumerate(BEFORE, 1):
        page.evaluate("(t) => window.solrace.session.move(t)", text)
        wait_seq(page, seq)
    click_move(page, LOSING)
    page.click("#resign")
    page.click("#resign")
    page.wait_for_selector("#results-title", timeout=WAIT_MS * 2)
    return page, race


def test_a_losing_move_is_marked_on_the_racers_replay(pages: Pages, new_bot: NewBot) -> None:
    page, race = losing_race(pages, new_bot())
    at = len(BEFORE) + 1
    # The results: a line per racer, Ann's names the move and links to it.
    line = page.locator('.analysis-list li[data-player="p1"][data-kind="lost"]')
    line.wait_for(timeout=WAIT_MS * 6)
    assert f"action {at} ({LOSING})" in line.inner_text()
    assert "winnable just before it" in line.inner_text()
    # The bot's analysis is asked for after Ann's is in (results.js, one racer at a time), and
    # works through the solver's queue as long again.
    bot_line = page.locator('.analysis-list li[data-player="p2"][data-kind]')
    bot_line.wait_for(timeout=WAIT_MS * 6)
    assert bot_line.get_attribute("data-kind") != "none", bot_line.inner_text()
    assert "winnable" in bot_line.inner_text()
    page.locator(".results-main").scroll_into_view_if_needed()
    screenshot(page, "analysis-results")
    # The replay: Ann's timeline has one red marker, at her losing move.
    marker = page.locator('.tl-row[data-player="p1"] button.tl-loss')
    marker.wait_for(timeout=WAIT_MS * 2)
    assert marker.count() == 1 and marker.get_attribute("data-at") == str(at)
    assert page.locator('.tl-row[data-player="p2"] button.tl-loss').count() == 0
    side = page.locator('.replay-side[data-player="p1"]')
    # Keyboard: the marker is a button in the tab order; Enter shows the move.
    marker.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at}'""")
    verdict = side.locator(".replay-verdict")
    assert verdict.get_attribute("data-kind") == "lost-here"
    assert "The deal was lost here" in verdict.inner_text()
    # Every text keeps its contrast, on a desktop and a phone (once the toasts, fading out
    # as they go, are gone).
    page.wait_for_function("!document.querySelector('.toast')", timeout=WAIT_MS * 2)
    for label, size in (("1280", DESKTOP), ("390", PHONE)):
        page.set_viewport_size(size)
        settle(page)
        assert not whole_page_failures(page), f"text below WCAG AA contrast at {label}"
        page.locator(".replay-timeline").scroll_into_view_if_needed()
        screenshot(page, f"analysis-replay-lost-{label}")
    page.set_viewport_size(DESKTOP)
    # One action back, the position could still be won.
    page.click('button[aria-label="Previous move"]')
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at - 1}'""")
    # (the last winnable one before the loss: the better move is named there)
    assert side.locator(".replay-verdict").get_attribute("data-kind") == "better"
    # The results' link goes to the move in the replay, from the top of the page.
    page.click('button[aria-label="First position"]')
    page.click('.analysis-list li[data-player="p1"] a.analysis-link')
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at}'""")
    assert f"replay=p1&at={at}" in page.url
    # The same address opened afresh lands on the move too.
    fresh = pages.open(f"/race/{race}?replay=p1&at={at}")
    fresh.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                                ?.dataset.step === '{at}'""", timeout=WAIT_MS * 2)
    fresh.wait_for_selector('.replay-side[data-player="p1"] .replay-verdict[data-kind="lost-here"]')


def test_the_results_show_accuracy_and_the_better_move_at_a_loss(pages: Pages,
                                                                 new_bot: NewBot) -> None:
    page, race = losing_race(pages, new_bot())
    at = len(BEFORE) + 1
    line = page.locator('.analysis-list li[data-player="p1"][data-kind="lost"]')
    line.wait_for(timeout=WAIT_MS * 6)
    report = json_get(pages.base, f"/api/races/{race}/analysis/p1")
    best = report["lost_at"]["best"]
    # The better move is one the rules accept there, and the solver wins from it.
    before = replay("scotch", SEED, BEFORE)
    assert before.is_legal(solrules.Move.from_text(best)) and best != LOSING
    before.push_text(best)
    assert solrules.solve(before, solrules.Budget(20_000)).verdict == "won"
    text = line.inner_text()
    assert f"Better: {best} (" in text and "instead, which kept the deal winnable" in text
    # Her accuracy: every move but the losing one kept the deal winnable.
    share = round(100 * (at - 1) / at)
    assert f"Accuracy {share} %: {at - 1} of {at} moves made from a winnable position" in text
    page.locator(".results-main").scroll_into_view_if_needed()
    page.wait_for_function("!document.querySelector('.toast')", timeout=WAIT_MS * 2)
    settle(page)
    assert not whole_page_failures(page), "text below WCAG AA contrast"
    ARTIFACTS.mkdir(exist_ok=True)
    line.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "coach-results.png"))
    # The replay: "Show the better move" goes to the last winnable position and marks the
    # move on the board (its cards and the pile it goes to).
    side = page.locator('.replay-side[data-player="p1"]')
    side.locator(".analysis .show-better").click()
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at - 1}'""")
    verdict = side.locator(".replay-verdict")
    assert verdict.get_attribute("data-kind") == "better"
    assert f"({best}), marked on the board" in verdict.inner_text()
    src, dst = best.split(">")
    dst = dst.split("/")[0]
    board = '[data-board="p1"]'
    page.wait_for_selector(f'{board} [data-pile="{src}"] .card.hinted')
    page.wait_for_selector(f'{board} [data-pile="{dst}"].hint-target')
    side.scroll_into_view_if_needed()
    settle(page)
    page.screenshot(path=str(ARTIFACTS / "coach-replay-better.png"))
    # At the loss, the board says what was better; "Play on" goes back to the last winnable
    # position, and there the solver's move is one click away.
    page.click('button[aria-label="Next move"]')
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at}'""")
    assert f"({best}) instead" in verdict.inner_text()
    play_on = side.locator(".play-on")
    assert play_on.inner_text() == f"Play on from action {at - 1}"
    assert side.locator(".play-here").is_visible()
    page.screenshot(path=str(ARTIFACTS / "coach-replay-loss.png"))
    play_on.click()
    page.wait_for_selector("#practice-title")
    title = page.inner_text("#practice-title")
    assert f"action {at - 1}, the last position that could still be won" in title
    page.wait_for_selector('[data-board="practice"] [data-pile="f1"]')
    shown = board_cards(page, "practice")
    for pile in replay("scotch", SEED, BEFORE).board()["piles"]:
        assert shown[pile["pile"]] == pile["cards"], pile["pile"]
    page.click("#practice-solver")
    page.wait_for_selector(f'[data-board="practice"] [data-pile="{src}"] .card.hinted')
    assert f"The solver plays {best}" in page.inner_text(".practice-status")
    page.screenshot(path=str(ARTIFACTS / "coach-practice-solver.png"))
    # Off the solver's line, the button says so instead of guessing.
    other = next(m.text() for m in replay("scotch", SEED, BEFORE).legal_moves()
                 if m.text() not in (best, LOSING) and "/" not in m.text())
    o_src, o_dst = other.split(">")
    page.locator(f'[data-board="practice"] [data-pile="{o_src}"] [data-depth="1"]').click()
    page.locator(f'[data-board="practice"] [data-pile="{o_dst}"]').click()
    page.wait_for_function("""() => !document.querySelector('#practice-undo').disabled""")
    page.click("#practice-solver")
    page.wait_for_function("""() => document.querySelector('.practice-status')
                              ?.textContent.includes("You left the solver's line")""")
    page.click("#practice-undo")
    page.click("#practice-solver")
    page.wait_for_function(f"""() => document.querySelector('.practice-status')
                               ?.textContent.includes("The solver plays {best}")""")


def test_play_on_from_here_is_a_practice_game_in_the_browser(pages: Pages,
                                                             new_bot: NewBot) -> None:
    page, _race = losing_race(pages, new_bot())
    page.wait_for_selector('.replay-side[data-player="p1"] .play-on:not([disabled])')
    page.wait_for_selector('.analysis-list li[data-player="p2"][data-kind]', timeout=WAIT_MS * 6)
    # Go to the position before the losing move: still winnable; play on from there.
    at = len(BEFORE)
    marker = page.locator('.tl-row[data-player="p1"] button.tl-loss')
    marker.wait_for(timeout=WAIT_MS * 6)
    marker.click()
    page.click('button[aria-label="Previous move"]')
    page.wait_for_function(f"""() => document.querySelector('.replay-side[data-player="p1"]')
                               ?.dataset.step === '{at}'""")
    expected = replay("scotch", SEED, BEFORE)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.click('.replay-side[data-player="p1"] .play-on')
    page.wait_for_selector("#practice-title")
    assert page.evaluate("document.activeElement.id") == "practice-title"
    note = page.inner_text(".practice-note")
    assert "Practice, not a race" in note and "unrated" in note
    # The board is drawn on the animation frame after the title shows.
    page.wait_for_selector('[data-board="practice"] [data-pile="f1"]')
    shown = board_cards(page, "practice")
    for pile in expected.board()["piles"]:
        assert shown[pile["pile"]] == pile["cards"], pile["pile"]
    # The solver's next move from here, played with the mouse: the practice board takes it.
    move = solrules.solve(expected, solrules.Budget(20_000)).line[0]
    src, dst = move.split(">")
    page.locator(f'[data-board="practice"] [data-pile="{src}"] [data-depth="1"]').click()
    page.locator(f'[data-board="practice"] [data-pile="{dst}"]').click()
    expected.push_text(move)
    count = """(n) => document.querySelectorAll(
      `[data-board="practice"] [data-pile="${n[0]}"] [data-card]`).length === n[1]"""
    page.wait_for_function(count, arg=[dst, len(expected.cards(dst))])
    # The clock runs; Undo takes the move back; nothing went to the server meanwhile.
    page.wait_for_function("document.querySelector('.practice-clock').textContent !== '0:00'")
    page.click("#practice-undo")
    expected.pop()
    page.wait_for_function(count, arg=[dst, len(expected.cards(dst))])
    assert not [u for u in requests if "/api/" in u or "/ws" in u]
    settle(page)
    assert not whole_page_failures(page), "text below WCAG AA contrast"
    screenshot(page, "analysis-practice")
    # Back to the replay, where it was.
    page.click("#practice-close")
    page.wait_for_selector(".replay-main:not([hidden])")
    assert page.evaluate("document.activeElement.classList.contains('play-on')")


def test_play_on_in_yukon_knows_the_face_down_cards(pages: Pages, new_bot: NewBot) -> None:
    """In a game with face-down cards the practice game starts from the racer's position with
    every card known: a move that turns a card up shows the card the deal has there."""
    bot = new_bot()
    page, race = race_with_bot(pages, bot, game="yukon", seed="123456")
    bot.play(race, 3)
    page.click("#resign")
    page.click("#resign")
    page.wait_for_selector("#results-title", timeout=WAIT_MS * 2)
    side = page.locator('.replay-side[data-side="b"]')
    side.locator(".play-on:not([disabled])").wait_for()
    page.click('button[aria-label="Last position"]')
    page.wait_for_function("""() => document.querySelector('.replay-side[data-side="b"]')
                              ?.dataset.step === '3'""")
    side.locator(".play-on").click()
    page.wait_for_selector("#practice-title")
    summary = json_get(pages.base, f"/api/races/{race}")
    moves = next(p["moves"] for p in summary["players"] if p["player"] == "p2")
    expected = replay("yukon", 123456, moves)
    # The board is drawn on the animation frame after the title shows.
    page.wait_for_selector('[data-board="practice"] [data-pile="f1"]')
    shown = board_cards(page, "practice")
    for pile in expected.board()["piles"]:
        assert shown[pile["pile"]] == [c for c in pile["cards"] if c], pile["pile"]
    # A move that turns a card face up: the practice board shows the deal's card there.
    flips = [m.text() for m in expected.legal_moves() if turns_up(expected, m)]
    flip = min(flips, key=lambda t: "/" in t)  # one card if any
    src, dst = flip.split(">")
    count = int(dst.split("/")[1]) if "/" in dst else 1
    dst = dst.split("/")[0]
    page.locator(f'[data-board="practice"] [data-pile="{src}"] [data-depth="{count}"]').click(
        position={"x": 6, "y": 6})  # its corner: the cards above it cover the rest
    page.locator(f'[data-board="practice"] [data-pile="{dst}"]').click()
    expected.push_text(flip)
    page.wait_for_function(
        """(n) => [...document.querySelectorAll(
             `[data-board="practice"] [data-pile="${n[0]}"] [data-card]`)].map(c => c.dataset.card)
             .join() === n[1]""",
        arg=[src, ",".join(face_up(expected, src))])


def face_up(game: solrules.Game, pile: str) -> list[str]:
    cards = next(p["cards"] for p in game.board()["piles"] if p["pile"] == pile)
    return [c for c in cards if c]


def turns_up(game: solrules.Game, move: solrules.Move) -> bool:
    before = game.board()["piles"]
    game.push(move)
    after = game.board()["piles"]
    game.pop()
    return any(a["cards"].count(None) < b["cards"].count(None) for a, b in zip(after, before,
                                                                               strict=True))


def json_get(base: str, path: str) -> Any:
    import json
    import urllib.request

    with urllib.request.urlopen(base + path, timeout=WAIT_MS / 1000) as answer:
        return json.loads(answer.read())
