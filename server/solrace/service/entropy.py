"""Where a process's new secrets and ids come from: the operating system's randomness
(:mod:`secrets`). The dispatcher and the tournament take it as an input (the
:class:`~solrace.core.dispatch.Entropy` protocol) and draw nothing themselves."""

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
