"""Playing together across ``solrace serve`` processes on one real Redis (issue 29): a
challenge made on one process reaches every page of its player on both and is accepted on the
other, exactly once; a decline reaches the challenger on the other process; a rematch in one
click between racers on two processes; a quick race's seek taken over after a reload that
lands on the other process, and its seat given when it was paired meanwhile."""

from __future__ import annotations

from typing import Any

from solrace.tools.race_client import RaceClient

from .conftest import T
from .servers import Solrace
from .test_cluster_play import SEEK, browser, refused
from .test_together import sit, three_moves, told


async def test_a_challenge_across_processes_reaches_every_page_and_is_taken_once(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    ann, ann_key = await browser(a, "Ann")
    bob_a, key = await browser(b, "Bob", "198.51.100.201")
    bob_b, _ = await browser(a, "", "198.51.100.201", key=key)  # his other tab, on A
    made = await ann.request({"type": "challenge", "to": "Bob", "game": "scotch",
                              "time_limit": 300})
    # Both seek a quick race meanwhile (Ann on a tab on B): the challenge's seat ends both
    # seeks, or each would hold two seats.
    ann_b, _ = await browser(b, "", key=ann_key)
    await ann_b.request({"type": "seek", "game": "yukon", "time_limit": 180, "bot_after": 0})
    await bob_a.request({"type": "seek", "game": "quadruple-canfield", "time_limit": 600,
                         "bot_after": 0})
    for page in (bob_a, bob_b):
        assert (await page.next_event("challenge", timeout=T))["challenge"] == made["challenge"]
    listed = await bob_a.request({"type": "challenges"})  # Redis's, from either process
    assert [c["challenge"] for c in listed["incoming"]] == [made["challenge"]]
    paired_bob = await bob_a.request({"type": "challenge_accept",
                                      "challenge": made["challenge"]})
    paired_ann = await ann.next_event("paired", timeout=T)
    assert paired_ann["race"] == paired_bob["race"] and paired_ann["kind"] == "challenge"
    for page in (ann_b, bob_a):
        assert (await page.next_event("seek_ended", timeout=T))["reason"] == "seated"
    assert (await bob_b.next_event("challenge_ended", timeout=T))["reason"] == "accepted"
    assert await refused(bob_b, {"type": "challenge_accept",
                                 "challenge": made["challenge"]}) == "not_found"
    await sit(paired_bob["race"], (ann, paired_ann), (bob_a, paired_bob))
    # Declined on the other process: the challenger hears it on his.
    again = await ann.request({"type": "challenge", "to": "Bob", "game": "yukon",
                               "time_limit": 180})
    await bob_b.next_event("challenge", timeout=T)
    await bob_b.request({"type": "challenge_decline", "challenge": again["challenge"]})
    no = await ann.next_event("challenge_declined", timeout=T)
    assert no["challenge"] == again["challenge"] and no["by"] == "Bob"
    assert (await told(bob_a, "challenge_ended", challenge=again["challenge"]))["reason"] == \
        "declined"
    for client in (ann, ann_b, bob_a, bob_b):
        await client.close()


async def test_a_rematch_in_one_click_between_two_processes(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    ann, _ = await browser(a, "Ann")
    bob, _ = await browser(b, "Bob")
    assert (await ann.request(SEEK))["type"] == "seeking"
    paired_bob = await bob.request(SEEK)
    paired_ann = await ann.next_event("paired", timeout=T)
    race = paired_bob["race"]
    await sit(race, (ann, paired_ann), (bob, paired_bob))
    await three_moves(race, ann, bob)
    await bob.resign(race)
    await ann.next_event("race_over", timeout=T)
    first = await bob.request({"type": "rematch", "race": race})
    assert first["next"] is None
    assert (await told(ann, "rematch", by="Bob"))["next"] is None
    second = await ann.request({"type": "rematch", "race": race})
    seat_ann = await ann.next_event("paired", timeout=T)
    seat_bob = await bob.next_event("paired", timeout=T)
    assert seat_ann["race"] == seat_bob["race"] == second["next"]
    await sit(second["next"], (ann, seat_ann), (bob, seat_bob))
    for client in (ann, bob):
        await client.close()


async def reload_on(proc: Solrace, client: RaceClient, key: str,
                    address: str) -> tuple[RaceClient, Any]:
    await client.close()
    return await browser(proc, "", address, key=key)


async def test_a_reload_on_the_other_process_keeps_the_seek_or_gets_its_seat(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    ann, key = await browser(a, "Ann", "198.51.100.211")
    first = await ann.request(SEEK)
    ann, _ = await reload_on(b, ann, key, "198.51.100.211")
    back = await ann.request({**SEEK, "resume": True})
    assert back["type"] == "seeking" and back["since"] == first["since"]
    bob, _ = await browser(a, "Bob")
    paired = await bob.request(SEEK)  # the seek now lives on B's connection
    assert paired["type"] == "paired"
    assert (await ann.next_event("paired", timeout=T))["race"] == paired["race"]
    # Paired while the page reloads: the reloaded page is given the seat.
    cy, cy_key = await browser(b, "Cy", "198.51.100.212")
    await cy.request(SEEK)
    await cy.close()
    dee, _ = await browser(a, "Dee")
    paired_dee = await dee.request(SEEK)
    assert paired_dee["type"] == "paired"
    cy, _ = await browser(a, "", "198.51.100.212", key=cy_key)
    seat = await cy.request({**SEEK, "resume": True})
    assert seat["type"] == "paired" and seat["race"] == paired_dee["race"]
    await sit(seat["race"], (cy, seat), (dee, paired_dee))
    for client in (ann, bob, cy, dee):
        await client.close()


async def test_house_bots_added_through_either_process_play_the_tournament(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    host = await RaceClient.connect(a.url)
    made = await host.request({"type": "tournament_create", "name": "Cup", "format": "rounds",
                               "games": ["scotch"], "gap": 0})
    tid = made["tournament"]
    helper = await RaceClient.connect(b.url)  # the host's tools on a page of the other process
    await helper.request({"type": "tournament_add_bot", "tournament": tid,
                          "token": made["host_token"], "level": 2})
    ann = await RaceClient.connect(b.url)
    await ann.request({"type": "tournament_join", "tournament": tid, "name": "Ann"})
    await helper.request({"type": "tournament_start", "tournament": tid,
                          "token": made["host_token"]})
    seat = await ann.next_event("round", timeout=T * 2)
    await ann.join(seat["race"], token=seat["token"])
    await ann.wait_state(seat["race"], T * 2)
    moved = await ann.next_event("progress", timeout=T * 3)
    assert moved["player"] != seat["player"]  # the bot plays, wherever its race runs
    for client in (host, helper, ann):
        await client.close()
