"""Wire codec: every frame decodes to a typed command or raises ProtocolError(bad_message)."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from solrace.protocol import codec, commands
from solrace.protocol.codec import ProtocolError


def bad(frame: str | bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        codec.decode(frame)
    assert info.value.code == "bad_message"
    return info.value


def js(obj: Any) -> str:
    return json.dumps(obj)


def test_json_and_msgpack_decode_the_same() -> None:
    msg = {"type": "move", "race": "abc", "move": "t1>f1", "seq": 3, "rid": "x"}
    assert codec.decode(js(msg)) == codec.decode(msgpack.packb(msg))
    assert codec.decode(js(msg)) == commands.MoveCmd("abc", "t1>f1", 3, "x")


def test_create_defaults_and_seed_forms() -> None:
    assert codec.decode(js({"type": "create", "game": "yukon"})) == commands.Create("yukon")
    big = 2**64 - 1
    assert codec.decode(js({"type": "create", "game": "g", "seed": str(big)})).seed == big
    assert codec.decode(js({"type": "create", "game": "g", "seed": 5})).seed == 5
    for seed in [-1, 2**64, "12a", "", 1.5, True, "-3", "１２"]:
        bad(js({"type": "create", "game": "g", "seed": seed}))
    for players in [0, 9, "2", 2.0, True]:
        bad(js({"type": "create", "game": "g", "players": players}))
    bad(js({"type": "create", "game": "g", "undo": 1}))
    bad(js({"type": "create", "game": "g", "time_limit": 0}))


@pytest.mark.parametrize(
    "frame",
    [
        "not json",
        "[1, 2]",
        '"str"',
        "{}",
        js({"type": 3}),
        js({"type": "fly"}),
        js({"type": "move", "race": "r", "move": "t1>f1"}),
        js({"type": "move", "race": "r", "move": "t1>f1", "seq": "1"}),
        js({"type": "move", "race": "r", "move": "t1>f1", "seq": 0}),
        js({"type": "move", "race": 5, "move": "t1>f1", "seq": 1}),
        js({"type": "move", "race": "r", "move": "x" * 100, "seq": 1}),
        js({"type": "join", "race": "r"}),
        js({"type": "join", "race": "r", "name": "\n\t"}),
        js({"type": "join", "race": "r", "name": "n" * 40}),
        js({"type": "start", "race": "r"}),
        js({"type": "ping", "rid": [1]}),
        js({"type": "ping", "rid": True}),
        "[" * 100_000,
        b"\xc1",
        b"\x93\x01\x02\x03",
        msgpack.packb({1: 2}),
        msgpack.packb({"type": "create", "game": b"bytes"}),
        b"\xdd\xff\xff\xff\xff",
        b"x" * (codec.MAX_FRAME + 1),
    ],
)
def test_bad_frames(frame: str | bytes) -> None:
    bad(frame)


def test_rid_survives_into_the_error() -> None:
    assert bad(js({"type": "fly", "rid": 7})).rid == 7
    assert bad(js({"type": "move", "race": "r", "rid": "a"})).rid == "a"


def test_names_are_normalised() -> None:
    cmd = codec.decode(js({"type": "join", "race": "r", "name": "  Ann   Lee "}))
    assert isinstance(cmd, commands.Join) and cmd.name == "Ann Lee"


def test_lone_surrogates_are_refused() -> None:
    # They would make the echoed rid (or name) impossible to encode in the reply.
    bad('{"type": "ping", "rid": "\\ud800"}')
    assert codec.decode('{"type": "ping", "rid": "\\u00e9t\\u00e9"}').rid == "été"


def test_encoders_round_trip() -> None:
    msg = {"type": "state", "seq": 1, "name": "Zoë", "board": {"cards": [None, "AS"]}}
    assert json.loads(codec.encode_json(msg)) == msg
    assert codec.encode_json(msg) == codec._encode_json_stdlib(msg)
    assert msgpack.unpackb(codec.encode_msgpack(msg)) == msg
