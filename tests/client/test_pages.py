"""Spectating eight racers, phone width, the other games' boards, the in-browser SHA-256."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.client.helpers import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    Bot,
    Pages,
    board_cards,
    create_race,
    own_cards,
    own_legal,
    screenshot,
    settle,
    wait_seq,
)

NewBot = Callable[[], Bot]


def start_race_with_bots(new_bot: NewBot, created: dict[str, Any], names: list[str]) -> list[Bot]:
    """Join one bot per name, then start the race with the host token."""
    race = created["race"]
    bots = []
    for name in names:
        b = new_bot()
        b.request({"type": "join", "race": race, "name": name})
        bots.append(b)
    bots[0].request({"type": "start", "race": race, "token": created["host_token"]})
    return bots


def test_spectate_eight_racers_fits_1280x800(pages: Pages, server: str, new_bot: NewBot) -> None:
    created = create_race(server, players=8, seed="48213")
    race = created["race"]
    names = ["Ada", "Brigitte", "Chidi", "Dmitri", "Esperanza", "Fumiko", "Gunnar", "Hélène"]
    bots = start_race_with_bots(new_bot, created, names)
    for i, b in enumerate(bots):
        b.play(race, i % 4 + 1)
    page = pages.open(f"/race/{race}/watch", viewport=DESKTOP)
    for i in range(1, 9):
        page.wait_for_selector(f'[data-board="p{i}"] [data-card]')
    settle(page)
    # Every racer's board and progress bar is on screen without scrolling.
    for i in range(1, 9):
        box = page.locator(f'[data-player="p{i}"]').bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["y"] >= 0
        assert box["x"] + box["width"] <= DESKTOP["width"] + 1
        assert box["y"] + box["height"] <= DESKTOP["height"] + 1, f"p{i} below the fold"
    # Spectators see live changes.
    before = board_cards(page, "p3")
    bots[2].play(race, 1)
    page.wait_for_function(
        "(n) => document.querySelector('[data-player=\"p3\"] .player-meta').textContent === n",
        arg=f"{3 + 1} moves",
    )
    settle(page)
    assert board_cards(page, "p3") != before
    screenshot(page, "spectate-8-racers-1280")


def test_phone_width_race_page(pages: Pages, server: str, new_bot: NewBot) -> None:
    created = create_race(server, players=3, seed="7")
    race = created["race"]
    home = pages.open("/", viewport=PHONE)
    home.wait_for_selector("text=Create race")
    assert home.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(home, "home-390")
    page = pages.open(f"/race/{race}", viewport=PHONE)
    page.fill("#racer-name", "Pip")
    page.click("text=Join race")
    page.wait_for_selector("text=You're in, Pip.")
    bots = [new_bot(), new_bot()]
    for name, b in zip(["Quinn", "Rosa"], bots, strict=True):
        b.request({"type": "join", "race": race, "name": name})
    bots[0].request({"type": "start", "race": race, "token": created["host_token"]})
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    bots[0].play(race, 2)
    page.wait_for_selector('[data-player="p2"] .player-meta >> text=2 moves')
    settle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # The whole own board fits the width, and a click-click move works on a phone.
    box = page.locator('[data-board="own"]').bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    move = next(m for m in own_legal(page) if "/" not in m)
    src, dst = move.split(">")
    page.locator(f'[data-board="own"] [data-pile="{src}"] [data-depth="1"]').click()
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
    wait_seq(page, 1)
    screenshot(page, "race-390", full_page=True)
    # The results fit the phone too.
    for b in bots:  # every other racer resigns: the page's racer has won, the race ends
        b.request({"type": "resign", "race": race})
    page.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    page.wait_for_selector('[data-replay="b"] [data-card]')
    settle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "results-390", full_page=True)


def test_yukon_board_hides_face_down_cards(pages: Pages, server: str, new_bot: NewBot) -> None:
    created = create_race(server, game="yukon", players=2, seed="99", undo=False)
    race = created["race"]
    page = pages.open(f"/race/{race}")
    page.fill("#racer-name", "Yuki")
    page.click("text=Join race")
    page.wait_for_selector("text=You're in, Yuki.")
    (bot,) = start_race_with_bots(new_bot, created, ["Kon"])
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    settle(page)
    assert page.locator("#undo").is_hidden()  # this race disallows undo
    state = page.evaluate("window.solrace.session.model.own")
    shown = own_cards(page)
    for pile in state["board"]["piles"]:
        assert shown[pile["pile"]] == [c for c in pile["cards"] if c], pile["pile"]
    # Face-down cards are drawn as backs without any identity.
    downs = sum(c is None for p in state["board"]["piles"] for c in p["cards"])
    assert page.locator('[data-board="own"] .card.down').count() == downs == 21
    # A multi-card move: click the deepest card of a run, then the target.
    group = next((m for m in own_legal(page) if "/" in m), None)
    if group:
        src_dst, count = group.split("/")
        src, dst = src_dst.split(">")
        # Cascaded cards show only their top strip: click there.
        page.locator(f'[data-board="own"] [data-pile="{src}"] [data-depth="{count}"]').click(
            position={"x": 8, "y": 6}
        )
        page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
        wait_seq(page, 1)
    bot.play(race, 1)
    page.wait_for_selector('[data-board="p2"] [data-card]')
    screenshot(page, "race-yukon-1280")


def test_quadruple_canfield_stock_and_reserve(pages: Pages, server: str, new_bot: NewBot) -> None:
    created = create_race(server, game="quadruple-canfield", players=1, seed="123456")
    race = created["race"]
    page = pages.open(f"/race/{race}")
    page.fill("#racer-name", "Solo")
    page.click("text=Join race")
    page.wait_for_selector("text=You're in, Solo.")
    new_bot().request({"type": "start", "race": race, "token": created["host_token"]})
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    settle(page)
    assert page.locator('[data-board="own"] [data-pile]').count() == 16 + 8 + 3
    waste = own_cards(page)["w"]
    assert "s>w" in own_legal(page)
    page.locator('[data-board="own"] [data-pile="s"]').click()
    wait_seq(page, 1)
    assert own_cards(page)["w"] != waste
    # Keyboard only: focus a pile, Enter picks its card, focus the target, Enter drops it.
    move = next(m for m in own_legal(page) if "/" not in m and m not in ("s>w", "w>s"))
    src, dst = move.split(">")
    page.locator(f'[data-board="own"] [data-pile="{src}"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(f'[data-board="own"] [data-pile="{dst}"].target')
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').focus()
    page.keyboard.press("Enter")
    wait_seq(page, 2)
    screenshot(page, "race-quadruple-canfield-1280")


def test_sha256_fallback_matches_crypto_subtle(pages: Pages) -> None:
    page = pages.open("/")
    result = page.evaluate(
        """async () => {
            const v = await import('/static/verify.js');
            const out = [];
            const inputs = ['', 'abc', 'scotch:18446744073709551615:' + 'f'.repeat(32),
                            'x'.repeat(200)];
            for (const s of inputs) {
                out.push([await v.sha256Hex(s), v._sha256Fallback(s)]);
            }
            return out;
        }"""
    )
    assert result[1][0] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    for subtle, fallback in result:
        assert subtle == fallback


def test_unknown_race(pages: Pages) -> None:
    page = pages.open("/race/doesnotexist")
    page.wait_for_selector("text=Race not found")
    page = pages.open("/race/doesnotexist/watch")
    page.wait_for_selector("text=Race not found")
