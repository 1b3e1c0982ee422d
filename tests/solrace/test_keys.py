"""The master key's derived keys and the seal (solrace.core.keys): a sealed text opens with its
key and context only, any change to it is refused before anything is decrypted, and the format
is pinned (the entries of a store made today must open tomorrow)."""

from __future__ import annotations

import base64

import pytest
from solrace.core.keys import (
    NONCE_BYTES,
    MasterKey,
    SealError,
    net_tag,
    seal,
    unseal,
)
from solrace.solver.pool import open_deal, seal_deal

KEY = MasterKey(bytes(range(32)))
NONCE = bytes(range(NONCE_BYTES))


def test_each_use_has_a_key_of_its_own() -> None:
    uses = ["net", "pool", "pool ", "Pool"]
    keys = {KEY.derive(use) for use in uses}
    assert len(keys) == len(uses)
    assert KEY.derive("pool") == MasterKey(bytes(range(32))).derive("pool")
    assert KEY.derive("pool") != MasterKey(bytes(range(1, 33))).derive("pool")
    assert repr(KEY) == "MasterKey(...)"
    with pytest.raises(ValueError):
        MasterKey(b"short")
    assert net_tag(KEY.derive("net"), "203.0.113.7") != net_tag(KEY.derive("pool"),
                                                                  "203.0.113.7")


def test_a_sealed_deal_is_pinned() -> None:
    """The format of a pool's entry: a change here would drop every deal in every store."""
    entry = seal_deal(KEY.derive("pool"), "yukon", 2**64 - 1, 93, NONCE)
    assert entry == "s1.AAECAwQFBgcICQoLDA0ODwQGXeZXQZXQYSHpOnSqcBMx6G6r7QFewkvznaY"
    assert open_deal(KEY.derive("pool"), "yukon", entry) == (2**64 - 1, 93)


def test_the_seal_opens_with_its_key_and_context_only() -> None:
    key = KEY.derive("pool")
    sealed = seal(key, b"pool:yukon", b"a secret deal", NONCE)
    assert unseal(key, b"pool:yukon", sealed) == b"a secret deal"
    assert "secret" not in sealed and b"secret" not in base64.urlsafe_b64decode(
        sealed[3:] + "==")
    for other_key, context in [(KEY.derive("net"), b"pool:yukon"),
                               (MasterKey(bytes(32)).derive("pool"), b"pool:yukon"),
                               (key, b"pool:scotch"), (key, b"pool:yuko"), (key, b"")]:
        with pytest.raises(SealError):
            unseal(other_key, context, sealed)
    # A fresh nonce, a fresh text: equal deals are not seen to be equal.
    again = seal(key, b"pool:yukon", b"a secret deal", bytes(NONCE_BYTES))
    assert again != sealed and unseal(key, b"pool:yukon", again) == b"a secret deal"
    assert unseal(key, b"", seal(key, b"", b"", NONCE)) == b""


def test_a_changed_sealed_text_never_opens() -> None:
    key = KEY.derive("pool")
    sealed = seal(key, b"pool:yukon", bytes(12), NONCE)
    raw = bytearray(base64.urlsafe_b64decode(sealed[3:] + "=" * (-len(sealed[3:]) % 4)))
    for i in range(len(raw)):  # every byte of nonce, ciphertext and tag
        for bit in (0x01, 0x80):
            changed = bytearray(raw)
            changed[i] ^= bit
            text = "s1." + base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("=")
            with pytest.raises(SealError):
                unseal(key, b"pool:yukon", text)
    for text in [sealed[:-1], sealed[:-4], sealed[:10], "s1.", "s2." + sealed[3:],
                 sealed[3:], "", "12345678901234567890", "s1.!!!!", "s1.é", sealed + "AA",
                 "s1." + "A" * 100_000]:
        with pytest.raises(SealError):
            unseal(key, b"pool:yukon", text)


def test_the_seal_refuses_a_bad_nonce_or_a_long_message() -> None:
    with pytest.raises(ValueError):
        seal(KEY.derive("pool"), b"", b"x", bytes(8))
    with pytest.raises(ValueError):
        seal(KEY.derive("pool"), b"", bytes(5000), NONCE)
    with pytest.raises(SealError):  # a pool's context, but not a deal's 12 bytes
        open_deal(KEY.derive("pool"), "yukon", seal(KEY.derive("pool"), b"pool:yukon",
                                                     bytes(11), NONCE))
