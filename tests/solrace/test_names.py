"""Names (solrace.core.names): skeletons by Unicode's confusables, reserved names, the guest
mark."""

from __future__ import annotations

import pytest
from solrace.core.confusables_table import PROTOTYPES, VERSION
from solrace.core.names import GUEST_MARK, guest_marked, reserved, skeleton
from solrace.settings import MAX_NAME


@pytest.mark.parametrize(("one", "other"), [
    ("anna5629", "\u0430nna5629"),  # Cyrillic а
    ("ANNA", "\uff41\uff4e\uff4e\uff41"),  # full width
    ("Ann", "\u0391NN"),  # Greek Α
    ("root", "r00t"),  # 0 is o
    ("hello", "he11o"),  # 1 is l
    ("rnoon", "moon"),  # m is rn
    ("Ian", "ian"),  # case first: a capital I is an i here
    ("Ann  Lee", " ann lee "),  # spaces
    ("pay-pal", "pay\u2010pal"),  # a hyphen is a hyphen-minus
])
def test_names_a_reader_cannot_tell_apart_have_one_skeleton(one: str, other: str) -> None:
    assert skeleton(one) == skeleton(other)


@pytest.mark.parametrize(("one", "other"), [("Ian", "lan"), ("ann", "anne"), ("bob", "dob")])
def test_different_names_keep_different_skeletons(one: str, other: str) -> None:
    assert skeleton(one) != skeleton(other)


def test_a_skeleton_is_its_own_skeleton_for_every_character_of_the_table() -> None:
    assert VERSION and len(PROTOTYPES) > 6000
    for source, prototype in PROTOTYPES.items():
        for text in (source, prototype, f"x{source}y"):
            once = skeleton(text)
            assert skeleton(once) == once, (text, once)


def test_reserved_names() -> None:
    for name in ("Ace bot", "ACE-BOT", "Random bot", "admin", "a.d.m.i.n", "Moderator",
                 "\u0430dmin", "Guest-12345", "guest 1", "Guest_x", "Guest.x", "guest",
                 "anna (guest)", "anna(GUEST)", "anna (gue\u0455t)"):
        assert reserved(name), name
    for name in ("Ann", "Guesthouse", "Modest", "Ace bots", "admin1", "Botanist", "My Guest"):
        assert not reserved(name), name


def test_the_guest_mark_fits_the_longest_name() -> None:
    assert guest_marked("ann") == "ann (guest)"
    long = guest_marked("x" * MAX_NAME)
    assert len(long) == MAX_NAME and long.endswith(GUEST_MARK)
    assert guest_marked("ann (guest)") == "ann (guest)"  # marked once
    assert reserved(guest_marked("anything"))
