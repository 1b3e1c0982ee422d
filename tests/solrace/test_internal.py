"""The messages between processes (solrace.protocol.internal): each kind written and read back
the same, through msgpack as on the wire."""

from __future__ import annotations

import msgpack
import pytest
from solrace.protocol import internal

WHERE = internal.Where("u1", 7, "203.0.113.5", {"u1": "p2"}, {"u1": "p2"}, {"u1": True})

INBOX = [
    internal.Forward("pid-a", 3, {"type": "move", "race": "u1", "move": "t1>f1", "seq": 4},
                     WHERE),
    internal.Deliver(7, b'{"type":"state"}'),
    internal.Op(7, "attach", "u1", "p2"),
    internal.Op(7, "unfollow", "u1"),
    internal.Done(3),
    internal.Gone("pid-a", 7),
    internal.Hello("pid-a", WHERE),
]

ENVELOPES = [
    internal.EventEnvelope("u1", "pid-b", 12, None, b'{"type":"progress","v":12}'),
    internal.EventEnvelope("u1", "pid-b", None, "p1", b'{"type":"state"}'),
    internal.BoardEnvelope("u1", "pid-b", "p1", "spectators", {"k": 1}, 0, [b"a", b"b"]),
    internal.Owner("u1", "pid-b"),
]


def wire(obj: internal.Wire) -> internal.Wire:
    return msgpack.unpackb(msgpack.packb(obj), raw=False)  # type: ignore[no-any-return]


@pytest.mark.parametrize("msg", INBOX, ids=lambda m: type(m).__name__)
def test_an_inbox_message_reads_back_as_written(msg: internal.Inbox) -> None:
    assert internal.read(wire(internal.write(msg))) == msg


@pytest.mark.parametrize("msg", ENVELOPES, ids=lambda m: type(m).__name__)
def test_a_unit_message_reads_back_as_written(msg: internal.Envelope) -> None:
    written = wire(internal.write_envelope(msg, "pid-b"))
    assert internal.read_envelope(written) == msg
    assert internal.sender_of(written) == "pid-b"
    assert internal.numbered(written) == (isinstance(msg, internal.EventEnvelope)
                                          and msg.v is not None)


def test_an_unknown_kind_is_none() -> None:
    assert internal.read({"k": "later"}) is None
    assert internal.read_envelope({"k": "z", "p": "x"}) is None
