"""Where a process's new secrets and ids come from: the operating system's randomness
(:mod:`secrets`). The dispatcher and the tournament take it as an input (the
:class:`~solrace.core.effects.Entropy` protocol) and draw nothing themselves."""

from __future__ import annotations

import secrets

from solrace.settings import ID_ALPHABET, RACE_ID_LENGTH, TOURNAMENT_ID_LENGTH


class SecretEntropy:
    """Tokens (racers', hosts', entrants'), salts, race and tournament ids."""

    @staticmethod
    def token() -> str:
        return secrets.token_urlsafe(24)

    @staticmethod
    def salt() -> str:
        return secrets.token_hex(16)

    @staticmethod
    def race_id() -> str:
        return "".join(secrets.choice(ID_ALPHABET) for _ in range(RACE_ID_LENGTH))

    @staticmethod
    def tournament_id() -> str:
        return "".join(secrets.choice(ID_ALPHABET) for _ in range(TOURNAMENT_ID_LENGTH))


def new_key() -> str:
    """A browser's player key, or a sign-in ticket: 32 random bytes, URL-safe (43
    characters)."""
    return secrets.token_urlsafe(32)


def new_player_id() -> str:
    """A player's public id: ``pl`` + 10 characters of [0-9a-z]."""
    return "pl" + "".join(secrets.choice(ID_ALPHABET) for _ in range(10))


def guest_name() -> str:
    return f"Guest-{secrets.randbelow(100_000):05d}"


def password_salt() -> bytes:
    return secrets.token_bytes(16)
