"""Playing together in the browser (issue 29): a challenge by link (a second browser opens it,
accepts, both race) and by name (the challenged player's banner on any page: Decline, and the
challenger's page says so); a rematch in one click (both click, both land in the new race); a
quick race's seek that survives a reload; a house bot added from the host's tools. Every page
keeps WCAG AA contrast."""

from __future__ import annotations

from typing import Any

from tests.client.contrast import whole_page_failures
from tests.client.helpers import WAIT_MS, Pages, both_widths, settle
from tests.client.test_play import pick_name, resign, seated

PHONE_375 = {"width": 375, "height": 812}


def path_of(url: str) -> str:
    """``/challenge/abc`` of ``http://127.0.0.1:8080/challenge/abc``."""
    return "/" + url.split("/", 3)[3]


def close_menu(page: Any) -> None:
    """Close the name's menu (pick_name leaves it open)."""
    page.evaluate("document.querySelector('details.me-menu')?.removeAttribute('open')")


def contrast_ok(page: Any, what: str) -> None:
    settle(page)
    bad = whole_page_failures(page)
    assert not bad, f"{what}: text below WCAG AA contrast: {bad}"


def test_challenge_by_link(pages: Pages) -> None:
    ann = pages.open("/")
    pick_name(ann, "Annie")
    ann.wait_for_selector(".challenge-panel >> text=Challenge a friend")
    ann.select_option("#challenge-home-game", "yukon")
    ann.check("#challenge-home-time-180", force=True)
    ann.click(".challenge-panel .challenge-link-btn")
    ann.wait_for_selector(".challenge-waiting >> text=/Send this link to a friend/")
    link = ann.input_value(".challenge-link")
    assert "/challenge/" in link
    assert "Yukon" in ann.inner_text(".challenge-wait-title")
    ann.locator(".challenge-panel").scroll_into_view_if_needed()
    both_widths(ann, "challenge-link-waiting", phone=PHONE_375)
    contrast_ok(ann, "the challenge's waiting panel")
    # A second browser, nobody yet, opens the link: who challenges, to what, Accept / Decline.
    bob = pages.open(path_of(link))
    bob.wait_for_selector("h1 >> text=Annie challenges you to a race")
    assert "Yukon" in bob.inner_text(".challenge-terms-big")
    assert bob.locator("#challenge-accept").is_visible()
    both_widths(bob, "challenge-page", phone=PHONE_375)
    contrast_ok(bob, "the challenge page")
    bob.click("#challenge-accept")
    seated(bob)
    seated(ann)  # the waiting page takes her to the race at once
    assert ann.url == bob.url
    assert bob.locator(".opponents a.player-link").inner_text() == "Annie"
    # The link is used up.
    late = pages.open(path_of(link))
    late.wait_for_selector("h1 >> text=This challenge is no longer open")


def test_challenge_by_name_declined(pages: Pages) -> None:
    cy = pages.open("/")
    pick_name(cy, "Cyril")
    dee = pages.open("/player/Cyril")
    pick_name(dee, "Deirdre")
    dee.wait_for_selector(".challenge-panel >> text=Challenge Cyril")
    dee.click(".challenge-panel .challenge-send")
    dee.wait_for_selector(".challenge-waiting >> text=/Waiting for Cyril to answer/")
    close_menu(dee)
    dee.locator(".challenge-panel").scroll_into_view_if_needed()
    both_widths(dee, "challenge-player-page", phone=PHONE_375)
    # Cyril sees it under the top bar of the page he has open, with Accept and Decline.
    offer = cy.wait_for_selector(".challenge-inbox .challenge-offer >> text=Deirdre challenges you")
    assert offer.is_visible()
    close_menu(cy)
    both_widths(cy, "challenge-banner", phone=PHONE_375)
    contrast_ok(cy, "the challenge banner")
    cy.click(".challenge-inbox .challenge-decline")
    cy.wait_for_selector(".challenge-inbox .challenge-offer", state="detached")
    dee.wait_for_selector(".challenge-panel .form-msg >> text=Cyril declined your challenge.")
    assert dee.locator(".challenge-form").is_visible()  # ready to challenge again


def quick_race_of_two(pages: Pages, first: str, second: str) -> tuple[Any, Any]:
    """Two named players paired in a quick race, seated, racing."""
    a, b = pages.open("/"), pages.open("/")
    pick_name(a, first)
    pick_name(b, second)
    for page in (a, b):
        page.check("#quick-time-600", force=True)
        page.click(".quick-btn[data-game=scotch]")
    seated(a)
    seated(b)
    assert a.url == b.url
    return a, b


def test_rematch_in_one_click(pages: Pages) -> None:
    ann, bob = quick_race_of_two(pages, "Rema", "Tchi")
    old = ann.url
    resign(ann)
    for page in (ann, bob):
        page.wait_for_selector(".results .rematch", timeout=WAIT_MS)
    ann.click(".results .rematch")
    ann.wait_for_selector(".results .rematch >> text=Rematch asked")
    # Bob is offered it: Rematch, or No thanks.
    bob.wait_for_selector(".rematch-offer >> text=Rema wants a rematch")
    assert bob.locator("#decline-rematch").is_visible()
    both_widths(bob, "rematch-one-click-offer")
    contrast_ok(bob, "the rematch offer")
    bob.click("#accept-rematch")
    # Both land in the new race at once: seated, no lobby, no ready.
    for page in (ann, bob):
        page.wait_for_url(lambda url: url != old, timeout=WAIT_MS)
        seated(page)
    assert ann.url == bob.url != old


def test_a_reload_keeps_the_seek(pages: Pages) -> None:
    ann = pages.open("/")
    pick_name(ann, "Rolo")
    ann.check("#quick-time-600", force=True)
    ann.click(".quick-btn[data-game=yukon]")
    ann.wait_for_selector(".seeking .seek-status >> text=Looking for an opponent")
    ann.wait_for_selector(".seek-clock >> text=/0:0[2-9]/")
    ann.reload()
    # The same seek: still looking, the time waited kept (not back to 0:00).
    ann.wait_for_selector(".seeking .seek-status >> text=Looking for an opponent")
    ann.wait_for_selector(".seek-clock >> text=/0:0[2-9]|0:[1-5]\\d/")
    assert "Yukon · 10 min" in ann.inner_text(".seek-title")
    bob = pages.open("/")
    pick_name(bob, "Bolo")
    bob.check("#quick-time-600", force=True)
    bob.click(".quick-btn[data-game=yukon]")
    seated(bob)
    seated(ann)
    assert ann.url == bob.url


def test_the_host_adds_a_bot(pages: Pages) -> None:
    host = pages.open("/")
    host.fill("#t-name", "Bot Cup")
    host.click(".t-create summary")
    host.select_option("#t-gap", "0")
    host.click("text=Create tournament")
    host.wait_for_selector(".host-panel >> text=Host tools")
    host.select_option("#t-bot-level", "1")
    host.click("#t-add-bot")
    host.wait_for_selector(".entrant-list >> text=Random bot", timeout=WAIT_MS)
    host.click("#t-add-bot")
    host.wait_for_selector(".entrant-list >> text=Random bot 2", timeout=WAIT_MS)
    both_widths(host, "tournament-add-bot", phone=PHONE_375)
    contrast_ok(host, "the host's tools")
    assert host.locator("#t-start").is_enabled()  # two entrants: the bots
    ann = pages.open(path_of(host.url))
    ann.fill("#entrant-name", "Anne")
    ann.click("text=Join tournament")
    ann.wait_for_selector(".you-panel >> text=You're in as Anne")
    host.click("#t-start")
    ann.wait_for_url("**/race/*", timeout=WAIT_MS * 2)
    ann.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
    # Her opponent is a house bot, and it plays.
    ann.wait_for_selector(".opponents .bot-tag")
    ann.wait_for_selector('.opponents .player-meta >> text=/[1-9]\\d* moves?/', timeout=WAIT_MS * 2)
