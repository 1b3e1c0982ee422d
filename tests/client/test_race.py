"""Two browsers race one Scotch deal by clicking while a third spectates; reload and dropped
connections resume; rejected moves show the server's message; results verify the commitment;
a racer who clears the deal gets its place and everyone a toast."""

from __future__ import annotations

import json
from typing import Any

from tests.client.helpers import (
    WAIT_MS,
    Pages,
    board_cards,
    click_move,
    create_race,
    own_cards,
    own_legal,
    own_seq,
    record_toasts,
    scotch_seed_with_foundation_moves,
    screenshot,
    solvable_scotch,
    top_card,
    wait_seq,
    wait_toast,
)


def tableau_move(legal: list[str]) -> str:
    return next(m for m in legal if ">t" in m and "/" not in m)


def test_two_racers_and_a_spectator(pages: Pages) -> None:
    seed = scotch_seed_with_foundation_moves()

    # Alice creates the race from the home page with a chosen deal.
    alice = pages.open("/")
    alice.select_option("#game", "scotch")
    alice.fill("#racers", "2")
    alice.locator("details.more summary").click()
    alice.fill("#seed", str(seed))
    alice.click("text=Create race")
    alice.wait_for_url("**/race/*")
    race = alice.url.rstrip("/").rsplit("/", 1)[1]
    alice.fill("#racer-name", "Alice")
    alice.click("text=Join race")
    alice.wait_for_selector("text=You're in, Alice.")
    commitment_before = alice.locator("#lobby-commitment").text_content()
    assert len(commitment_before) == 64

    # Bob opens the shared link and joins; Carol watches.
    bob = pages.open(f"/race/{race}")
    bob.fill("#racer-name", "Bob")
    bob.click("text=Join race")
    bob.wait_for_selector("text=You're in, Bob.")
    carol = pages.open(f"/race/{race}/watch")
    carol.wait_for_selector(".lobby-list >> text=Bob")
    alice.wait_for_selector(".lobby-list >> text=Bob")

    # Only the host sees Start; the countdown runs, then both get the same deal.
    assert bob.locator("#start").count() == 0
    alice.click("#start")
    for page in (alice, bob):
        page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    assert own_cards(alice) == own_cards(bob)
    carol.wait_for_selector('[data-board="p1"] [data-card]')
    carol.wait_for_selector('[data-board="p2"] [data-card]')
    assert board_cards(carol, "p1") == own_cards(alice)

    # Nothing is clickable but the server's legal moves: no selection on an immovable card.
    legal = own_legal(alice)
    sources = {m.split(">")[0] for m in legal}
    immovable = next(f"t{i}" for i in range(1, 19) if f"t{i}" not in sources)
    top_card(alice, immovable).click()
    assert alice.locator('[data-board="own"] .target').count() == 0
    assert alice.locator('[data-board="own"] .card.movable').count() == len(sources)

    # Alice plays by clicking: the spectator sees her board change.
    move = tableau_move(legal)
    src, dst = move.split(">")
    card = own_cards(alice)[src][-1]
    top_card(alice, src).click()
    alice.wait_for_selector(f'[data-board="own"] [data-pile="{dst}"].target')
    targets = alice.eval_on_selector_all(
        '[data-board="own"] .target', "els => els.map(e => e.dataset.pile)"
    )
    assert sorted(targets) == sorted(m.split(">")[1] for m in legal if m.startswith(src + ">"))
    screenshot(alice, "race-selection-1280")
    alice.keyboard.press("Escape")
    alice.wait_for_selector('[data-board="own"] .target', state="detached")
    click_move(alice, move)
    assert own_cards(alice)[dst][-1] == card
    carol.wait_for_selector(f'[data-board="p1"] [data-pile="{dst}"] [data-card="{card}"]')
    bob.wait_for_selector(f'[data-board="p1"] [data-pile="{dst}"] [data-card="{card}"]')
    assert carol.locator('[data-player="p1"] .player-meta').inner_text() == "1 move"

    # Bob double-clicks an Ace home, then drags a card; Carol sees both.
    ace_pile = next(m.split(">")[0] for m in own_legal(bob) if ">f" in m)
    ace = own_cards(bob)[ace_pile][-1]
    # A double-click whose second press comes before the page draws the first click's
    # selection (frames held back), and whose release comes after: the redraw in between must
    # not lose the gesture (it did once in a while, when every card was drawn anew).
    box = top_card(bob, ace_pile).bounding_box()
    bob.evaluate("""() => { window.heldFrames = []; window.frame = window.requestAnimationFrame;
        window.requestAnimationFrame = (f) => window.heldFrames.push(f); }""")
    bob.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    bob.mouse.down(click_count=2)
    bob.evaluate("""() => { window.requestAnimationFrame = window.frame;
        for (const f of window.heldFrames.splice(0)) f(performance.now()); }""")
    assert bob.locator(f'[data-board="own"] [data-pile="{ace_pile}"] .card.selected').count()
    bob.mouse.up(click_count=2)
    wait_seq(bob, 1)
    carol.wait_for_selector(f'[data-board="p2"] [data-pile^="f"] [data-card="{ace}"]')
    # Alice's screen reader hears about it (polite live region).
    alice.wait_for_selector('#announce-polite >> text="Bob: 1 of 52 cards home"', state="attached")
    move = tableau_move(own_legal(bob))
    src, dst = move.split(">")
    top_card(bob, src).drag_to(bob.locator(f'[data-board="own"] [data-pile="{dst}"]'))
    wait_seq(bob, 2)
    carol.wait_for_selector('[data-player="p2"] .player-meta >> text=2 moves')

    # Keyboard: pile keys select a source then a destination.
    move = next(m for m in own_legal(alice) if ">f" in m)
    src, dst = move.split(">")
    alice.locator('[data-board="own"] [data-pile="t1"]').focus()
    alice.keyboard.type(src)
    alice.wait_for_selector(f'[data-board="own"] [data-pile="{src}"].source')
    alice.keyboard.type(dst)
    wait_seq(alice, 2)

    # A rejected move shows the server's message and the board stays as it was.
    before = own_cards(alice)
    legal = set(own_legal(alice))
    bad = next(
        f"t{a}>t{b}"
        for a in range(1, 19)
        for b in range(1, 19)
        if a != b and f"t{a}>t{b}" not in legal and before[f"t{a}"]
    )
    alice.fill("#move-input", bad)
    alice.press("#move-input", "Enter")
    alice.wait_for_selector(".move-msg:not(:empty)")
    assert alice.locator(".move-msg").inner_text().strip()
    assert own_cards(alice) == before
    assert own_seq(alice) == 2

    # Undo through the button takes back the last move (an action of its own).
    alice.click("#undo")
    wait_seq(alice, 3)
    assert own_cards(alice) != before

    # Moves and the server's skipped own-board events never forced a resync.
    assert alice.evaluate("window.solrace.session.resyncs") == 1
    screenshot(alice, "race-1280")
    screenshot(carol, "spectate-2-racers-1280")

    # Reload mid-race: Bob is the same racer with the same board.
    bob_cards = own_cards(bob)
    bob.reload()
    bob.wait_for_selector('[data-board="own"] [data-card]')
    wait_seq(bob, 2)
    assert own_cards(bob) == bob_cards

    # A dropped connection shows "reconnecting", then resumes and plays on.
    # (Every state the indicator shows is recorded: on a busy machine "reconnecting" may
    # come and go between two looks of the test.)
    bob.evaluate("""() => {
      const el = document.querySelector('#conn');
      window.connStates = [];
      new MutationObserver(() => window.connStates.push(el.dataset.state || ''))
        .observe(el, {attributes: true, attributeFilter: ['data-state']});
      window.solrace.session.conn.drop();
    }""")
    bob.wait_for_function("window.connStates.includes('reconnecting')", timeout=WAIT_MS * 2)
    bob.wait_for_selector("#conn:empty", timeout=WAIT_MS * 2, state="attached")
    click_move(bob, tableau_move(own_legal(bob)))
    carol.wait_for_selector('[data-player="p2"] .player-meta >> text=3 moves')

    # Alice resigns (two clicks: confirm), which ends a race of two; everyone gets the
    # results, which verify the deal.
    alice.click("#resign")
    alice.click("#resign")
    for page in (alice, bob, carol):
        page.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    assert alice.locator("#seed-value").inner_text() == str(seed)
    assert alice.locator("#commitment-value").inner_text() == commitment_before
    assert alice.locator(".standings-table tbody tr").count() == 2

    # Replay: step through Alice's moves beside Bob's.
    alice.wait_for_selector('[data-replay="a"] [data-card]')
    start = board_cards(alice, "p1")
    alice.click('button[aria-label="Next move"]')
    alice.wait_for_function(
        """(start) => JSON.stringify(
             [...document.querySelectorAll('[data-replay="a"] [data-pile]')].map(
               p => [...p.querySelectorAll('[data-card]')].map(c => c.dataset.card))) !== start""",
        arg=json.dumps(list(start.values())),
    )
    assert alice.locator("#replay-step").input_value() == "1"
    screenshot(alice, "results-1280", full_page=True)


def test_finishing_racer_gets_toast_and_place(pages: Pages, new_bot: Any) -> None:
    seed, line = solvable_scotch()
    created = create_race(pages.base, players=2, seed=str(seed))
    race = created["race"]
    winner = pages.open(f"/race/{race}")
    winner.fill("#racer-name", "Winnie")
    winner.click("text=Join race")
    winner.wait_for_selector("text=You're in, Winnie.")
    watcher = pages.open(f"/race/{race}/watch")
    loser = new_bot()
    loser.request({"type": "join", "race": race, "name": "Lou"})
    loser.request({"type": "start", "race": race, "token": created["host_token"]})
    winner.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    watcher.wait_for_selector('[data-board] [data-card]', timeout=WAIT_MS)
    record_toasts(winner)
    record_toasts(watcher)
    # Play the winning line through the page's session (the same path clicks take).
    winner.evaluate(
        "async (line) => { for (const m of line) await window.solrace.session.move(m); }", line
    )
    wait_toast(winner, "You finished 1st")
    winner.wait_for_selector(".banner-good >> text=/You finished 1st/")
    wait_toast(watcher, "Winnie finished 1st")
    watcher.wait_for_selector('[data-player="p1"] .player-badge >> text=/1st/')
    assert len(board_cards(winner, "own")["f1"]) == 13
    screenshot(watcher, "spectate-finisher-1280")
    loser.request({"type": "resign", "race": race})
    winner.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS)
    first = winner.locator(".standings-table tbody tr").first
    assert "Winnie" in first.inner_text()
    assert ":" in first.locator("td").nth(2).inner_text()  # a finishing time
