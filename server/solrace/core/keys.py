"""The server's master key and what is derived from it. Pure: the key comes in (read or made by
the process that starts the server, kept outside the database), nothing here reads a file.

One 32-byte secret per deployment; each use gets a key of its own, derived with HMAC-SHA256
over its purpose, so that no two uses ever share a key:

- ``net``: the tag of a client's network (:func:`net_tag`), kept with a racer and a result so
  that the rules of rated play and the fair-play signals can tell that two accounts share an
  address without the store holding any address (a copy of the store tells nothing: the tag
  of an address cannot be worked out without the key).
- ``pool``: the seal of the private pool's deals (:func:`seal`, used by
  :mod:`solrace.solver.pool`): the store holds each upcoming winnable deal sealed, so that a copy
  of the database, or a backup of it, tells none of the next deals.

**Where the key lives.** Never in the store it protects: ``solrace serve`` reads it once at
start from a file of its own (``--key-file``; beside the SQLite file by default, ``<db>.key``;
required on Redis, the same file for every process) and hands it to the server
(:mod:`solrace.tools.key_file`). A copy of the database alone therefore opens nothing sealed
in it, nor tells which network a tag stands for.

**What a lost key costs** (a new one is made where the file is missing, and a warning logged
when the store already holds data): the pool's sealed deals cannot be opened any more, so they
are dropped as they are taken, never dealt, and the solver refills the pool (50 deals of each
game from empty: about half a minute here, docs/architecture.md, "Data on disk"); and the
network tags of past results no longer match the tags of new ones, so the same-network rules
start again from nothing.
Nothing else depends on it: races, players, ratings and the daily deals are in clear in the
store (a running race's seed is, as it must be rebuilt after a crash).

**The seal** (:func:`seal`, :func:`unseal`), standard library only: an encrypt-then-MAC
construction over HMAC-SHA256 as its pseudo-random function. Each message gets a random
16-byte nonce (given by the caller: this module draws nothing); its bytes are XORed with the
stream ``HMAC(k_stream, nonce ‖ counter)``, and an HMAC tag (``k_tag``, 16 bytes) covers the
context (what the message is for, e.g. the game of a pool's deal), the nonce and the ciphertext,
and is checked, in constant time, before anything is decrypted. ``k_stream`` and ``k_tag`` are
derived from the use's key, so a key's two roles never meet. A message sealed under another
key, for another context, cut, altered or in another format does not open: :class:`SealError`.
(AES-GCM from the ``cryptography`` package would do the same; a few bytes per deal do not
justify a compiled dependency.)
"""

from __future__ import annotations

import base64
import hashlib
import hmac

#: Bytes of the master key.
KEY_BYTES = 32
#: Bytes of a sealed message's nonce (random, one per message) and of its tag.
NONCE_BYTES = 16
TAG_BYTES = 16
#: The longest message :func:`seal` takes (bytes): seals are for short secrets.
MAX_SEALED = 4096
#: The version of the sealed text (its prefix): another format is refused, never guessed at.
SEAL_PREFIX = "s1."


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


class SealError(ValueError):
    """A sealed text that does not open: another key, another context, altered, cut, or not
    a sealed text at all."""


def _subkeys(key: bytes) -> tuple[bytes, bytes]:
    return (hmac.new(key, b"seal:stream", hashlib.sha256).digest(),
            hmac.new(key, b"seal:tag", hashlib.sha256).digest())


def _stream(key: bytes, nonce: bytes, n: int) -> bytes:
    blocks = (hmac.new(key, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest()
              for i in range((n + 31) // 32))
    return b"".join(blocks)[:n]


def _tag(key: bytes, context: bytes, nonce: bytes, body: bytes) -> bytes:
    # The context's length first: ("ab", "c…") and ("a", "bc…") never share a tag.
    data = len(context).to_bytes(4, "big") + context + nonce + body
    return hmac.new(key, data, hashlib.sha256).digest()[:TAG_BYTES]


def seal(key: bytes, context: bytes, message: bytes, nonce: bytes) -> str:
    """``message`` sealed under ``key`` (a use's key, e.g. ``derive("pool")``) for
    ``context``: ASCII text (``s1.`` and URL-safe base64 of nonce, ciphertext and tag) that
    only :func:`unseal` with the same key and context opens. ``nonce``: 16 fresh random bytes
    (``secrets.token_bytes(NONCE_BYTES)``), never used twice with one key. ValueError for a
    nonce of another length or a message longer than :data:`MAX_SEALED`."""
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce has {NONCE_BYTES} bytes")
    if len(message) > MAX_SEALED:
        raise ValueError(f"a sealed message has at most {MAX_SEALED} bytes")
    k_stream, k_tag = _subkeys(key)
    body = bytes(a ^ b for a, b in zip(message, _stream(k_stream, nonce, len(message)),
                                       strict=True))
    raw = nonce + body + _tag(k_tag, context, nonce, body)
    return SEAL_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def unseal(key: bytes, context: bytes, sealed: str) -> bytes:
    """The message of a text made by :func:`seal` with the same ``key`` and ``context``.
    :class:`SealError` for anything else (the tag is checked before anything is decrypted)."""
    if not sealed.startswith(SEAL_PREFIX) or len(sealed) > 2 * MAX_SEALED:
        raise SealError("not a sealed text")
    text = sealed[len(SEAL_PREFIX):]
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise SealError("not a sealed text") from None
    if len(raw) < NONCE_BYTES + TAG_BYTES:
        raise SealError("a sealed text cut short")
    nonce, body, tag = raw[:NONCE_BYTES], raw[NONCE_BYTES:-TAG_BYTES], raw[-TAG_BYTES:]
    k_stream, k_tag = _subkeys(key)
    if not hmac.compare_digest(tag, _tag(k_tag, context, nonce, body)):
        raise SealError("the seal does not open with this key")
    return bytes(a ^ b for a, b in zip(body, _stream(k_stream, nonce, len(body)), strict=True))
