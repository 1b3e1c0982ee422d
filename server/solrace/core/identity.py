"""Who a player is: his public id, his unique name, the hash of his browser keys, his password.

A browser holds a long random *key* (a cookie the server sets; see docs/protocol.md, "Who you
are"); the server keeps only its SHA-256, so a stolen database gives no key. A key is long and
random, so a fast hash is enough; a *password* is chosen by a person, so it is kept as
``hashlib.scrypt`` (memory-hard) with a salt of its own. Names are unique by their skeleton
(:func:`name_key`, :mod:`solrace.core.names`): names a reader cannot tell apart ("Ann", "ＡＮＮ",
"Аnn" with a Cyrillic А) are one name.

Pure: no I/O, no randomness (keys, ids and salts come from :mod:`solrace.service.entropy`);
scrypt costs ~50 ms of CPU: the server runs it in a thread.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from solrace.core.names import skeleton

#: scrypt's cost: n=2^14, r=8 (16 MiB of memory per hash), p=1.
SCRYPT_N = 1 << 14
SCRYPT_R = 8
SCRYPT_P = 1
MIN_PASSWORD = 8
#: The rating a player shows in a game he has no rated race of yet (solrace.core.rating).
NEW_RATING = 1500
MAX_PASSWORD = 128


@dataclass(frozen=True, slots=True)
class Player:
    """A player as stored: ``password`` is the scrypt record (None: no password set)."""

    id: str
    name: str
    created_at: int
    password: str | None = None


@dataclass(frozen=True, slots=True)
class Who:
    """The player a connection speaks for, as the rooms see him: his id, his name, his
    shown rating per game (and whether it is provisional) when he connected or last joined
    (for the pages), and whether he is an **account** (a player with a password: only
    accounts play rated races; a player without one is a *guest*)."""

    id: str
    name: str
    ratings: tuple[tuple[str, int, bool], ...] = ()
    account: bool = False

    def rating(self, game: str) -> int:
        """His shown rating in ``game`` (a new player's, 1500, if he has none yet)."""
        for g, r, _ in self.ratings:
            if g == game:
                return r
        return NEW_RATING

    def provisional(self, game: str) -> bool:
        for g, _, p in self.ratings:
            if g == game:
                return p
        return True


def key_hash(key: str) -> str:
    """What the server keeps of a key (or a ticket)."""
    return hashlib.sha256(key.encode()).hexdigest()


def well_formed_key(key: str) -> bool:
    """A cookie value that could be a key this server made (anything else is ignored)."""
    return len(key) == 43 and all(c.isalnum() or c in "-_" for c in key) and key.isascii()


def name_key(name: str) -> str:
    """The form under which two names are the same name: its skeleton
    (:func:`solrace.core.names.skeleton`)."""
    return skeleton(name)


def own_key(key: str, pid: str) -> str:
    """The key a player's name is kept under when an older player's name has the same key (a
    store keyed under an earlier rule): no name has it (a skeleton holds no newline)."""
    return f"{key}\n{pid}"


def hash_password(password: str, salt: bytes) -> str:
    """The scrypt record of a password with a salt of its own (16 random bytes):
    ``scrypt$n$r$p$salt$hash`` (hex)."""
    digest = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P,
                            dklen=32, maxmem=64 * 1024 * 1024)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def check_password(password: str, record: str | None) -> bool:
    """Does ``password`` match the record? (Compared in constant time; False without one.)"""
    if not record:
        return False
    try:
        kind, n, r, p, salt, digest = record.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r),
                             p=int(p), dklen=len(digest) // 2, maxmem=64 * 1024 * 1024)
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(got.hex(), digest)
