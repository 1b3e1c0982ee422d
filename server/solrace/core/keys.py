"""The server's master key and what is derived from it. Pure: the key comes in (read or made by
the process that starts the server, kept outside the database), nothing here reads a file.

One 32-byte secret per deployment; each use gets a key of its own, derived with HMAC-SHA256
over its purpose, so that no two uses ever share a key:

- ``net``: the tag of a client's network (:func:`net_tag`), kept with a racer and a result so
  that the rules of rated play and the fair-play signals can tell that two accounts share an
  address without the store holding any address (a copy of the store tells nothing: the tag
  of an address cannot be worked out without the key).
"""

from __future__ import annotations

import hashlib
import hmac

#: Bytes of the master key.
KEY_BYTES = 32


class MasterKey:
    """The deployment's secret (see the module docstring)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("a master key has at least 16 bytes")
        self._secret = secret

    def derive(self, purpose: str) -> bytes:
        """The key of one use (``"net"``, ``"pool"``, ...)."""
        return hmac.new(self._secret, b"solrace:" + purpose.encode(), hashlib.sha256).digest()

    def __repr__(self) -> str:  # never the secret itself in a log
        return "MasterKey(...)"


def net_tag(key: bytes, address: str) -> str:
    """The tag of a client's network (the unit of every per-client limit, an IPv4 address or
    an IPv6 /64: :func:`solrace.core.quotas.client_key`), under ``key`` (``derive("net")``):
    16 hex digits, equal for equal networks. Empty for an unknown address."""
    if not address:
        return ""
    return hmac.new(key, address.encode(), hashlib.sha256).hexdigest()[:16]
