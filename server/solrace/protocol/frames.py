"""WebSocket data frames as a server sends them (RFC 6455 section 5.2), built from an encoded
message: the same bytes for every recipient, so an event's frame is built once
(:meth:`solrace.protocol.event.Event.frame`) and written straight to each socket by
:mod:`solrace.net.raw_frames`. Pure: bytes in, bytes out."""

from __future__ import annotations

import struct


def frame(payload: bytes, binary: bool) -> bytes:
    """A whole unmasked, unfragmented WebSocket data frame (RFC 6455 section 5.2), as a server
    sends it: the same bytes for every recipient, so it is built once per event."""
    opcode = 0x82 if binary else 0x81  # FIN + binary / text
    n = len(payload)
    if n < 126:
        header = bytes((opcode, n))
    elif n < 1 << 16:
        header = struct.pack("!BBH", opcode, 126, n)
    else:
        header = struct.pack("!BBQ", opcode, 127, n)
    return header + payload
