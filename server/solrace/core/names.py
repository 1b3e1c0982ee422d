"""Names as people see them: when two names are one (their *skeleton*), which names no player
may take (*reserved*), and the mark an anonymous racer's name gets when it is someone else's.

**Skeleton.** Two names are the same name when a reader cannot tell them apart: ``Ann``,
``ANN`` and ``ＡＮＮ`` (case and width), ``Аnn`` with a Cyrillic А, ``Ann`` with a Greek Α...
The skeleton is Unicode's TR39 one (section 4: NFD, every character replaced by its prototype
in the confusables table, NFD again) after case and width folding (NFKC, case-folded), done
again until nothing changes (a prototype may itself fold: ``Ꭺ`` → ``A`` → ``a``), with runs of
spaces made one and the ends trimmed. Equal skeletons, one name: ``аnna5629`` is taken when
``anna5629`` is. Case folding comes first, so a capital ``I`` is an ``i`` here, not the ``l``
TR39 alone would make it (``Ian`` and ``ian`` are one name; ``Ian`` and ``lan`` are two); ``1``
→ ``l``, ``0`` → ``o`` and ``m`` → ``rn`` do hold (``r00t`` is ``root``).

The table is :mod:`solrace.core.confusables_table`, generated from Unicode's
``confusables.txt`` by scripts/confusables_table.py (why a table of our own and not a library:
that script's docstring). :data:`VERSION` changes with it: the stores key their names again at
start when it does.

**Reserved names** (:func:`reserved`): the house bots' names, a few words that speak for the
site (``admin``, ``moderator``, ``solrace``...), any name that starts as a server-made guest
name does (``Guest-``, ``Guest ``, ``Guest_``, ``Guest.``, or ``Guest`` alone), and any name
that ends with the guest mark. All compared by skeleton, with spaces and punctuation left out
for the words (``Ad-min`` is ``admin``). The server still names new players ``Guest-nnnnn``
itself.

**The guest mark** (:func:`guest_marked`): an anonymous racer who asks for a player's name, or
a reserved one, races as ``anna5629 (guest)``; names ending so are reserved, so the mark always
means what it says.

Pure: no I/O.
"""

from __future__ import annotations

import unicodedata

from solrace.core.confusables_table import PROTOTYPES
from solrace.core.confusables_table import VERSION as TABLE_VERSION
from solrace.core.levels import LEVELS, bot_name
from solrace.settings import MAX_NAME

#: The version of the rule: the table's Unicode version and this module's own. A store keeps it
#: beside the keys it made, and keys every name again when it differs.
VERSION = f"tr39-{TABLE_VERSION}/1"

#: Words no player may take as his name (compared by skeleton, spaces and punctuation left out).
RESERVED_WORDS = ("admin", "administrator", "moderator", "mod", "solrace", "system", "server",
                  "root", "support", "staff", "owner", "official", "anonymous")

#: What an anonymous racer's name gets when it is a player's (or a reserved one).
GUEST_MARK = " (guest)"


def fold(text: str) -> str:
    """Case and width folding: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def _confusable(text: str) -> str:
    """TR39's skeleton: NFD, each character by its prototype, NFD again."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(PROTOTYPES.get(c, c) for c in decomposed))


def skeleton(name: str) -> str:
    """The form under which two names are one name (see the module docstring)."""
    text = fold(name)
    for _ in range(8):  # twice is enough for every character of the table; a bound all the same
        again = fold(_confusable(text))
        if again == text:
            break
        text = again
    return " ".join(text.split())


def _bare(name: str) -> str:
    """The skeleton without spaces, punctuation or symbols: what the reserved words are
    compared with."""
    return "".join(c for c in skeleton(name) if unicodedata.category(c)[0] not in "PZS")


_WORDS = frozenset(_bare(w) for w in RESERVED_WORDS)
_BOTS = frozenset(_bare(bot_name(level)) for level in LEVELS.values())
_GUEST = skeleton("guest")
_GUEST_PREFIXES = tuple(skeleton(f"guest{sep}x")[:-1] for sep in "- _.")
_MARK = skeleton(GUEST_MARK).replace(" ", "")


def reserved(name: str) -> bool:
    """May no player take this name? (See the module docstring.)"""
    key = skeleton(name)
    if key == _GUEST or key.startswith(_GUEST_PREFIXES) or key.replace(" ", "").endswith(_MARK):
        return True
    bare = _bare(name)
    return bare in _WORDS or bare in _BOTS


def guest_marked(name: str) -> str:
    """``name`` with the guest mark, within the longest name (the name is cut if need be). A
    name that carries the mark already is left as it is."""
    if name.endswith(GUEST_MARK):
        return name
    return name[:MAX_NAME - len(GUEST_MARK)].rstrip() + GUEST_MARK
