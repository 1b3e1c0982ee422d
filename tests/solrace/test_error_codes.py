"""Every error code the server can send is a member of :class:`solrace.core.errors.Code` and a
row of the table of docs/protocol.md ("Errors"), and every member and row is a code the server
sends: the three say the same, read from the source (every refusal names its code as
``Code.X``, never as a bare string)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from solrace.core.errors import Code

REPO = Path(__file__).resolve().parents[2]
SOLRACE = REPO / "server" / "solrace"
PROTOCOL_MD = REPO / "docs" / "protocol.md"

#: What takes an error code as its first argument: the refusals raised, and the error reply.
REFUSALS = {"RaceError", "TournamentError", "ProtocolError", "error"}
#: Where the HTTP answers are made (their bodies: ``{"error": code, "message"?: …}``).
HTTP = "server/solrace/net/"


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SOLRACE.rglob("*.py")):
        if path != SOLRACE / "core" / "errors.py":
            yield str(path.relative_to(REPO)), ast.parse(path.read_text(), str(path))


def _name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name)
                                             and f.value.id in ("log", "logging")):
        return f.attr
    return None


def _code_args() -> Iterator[tuple[str, ast.expr]]:
    """Every expression the server passes as an error code, with where it is: the first
    argument of a refusal or an error reply (``super().__init__`` of a refusal's subclass
    among them), and an HTTP answer's ``{"error": …}`` (the solver's own answers carry an
    ``error`` of their own: a sentence between processes, never sent)."""
    for where, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(b, ast.Name) and b.id in REFUSALS for b in node.bases):
                for call in ast.walk(node):
                    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "__init__" and call.args):
                        yield f"{where}:{call.lineno}", call.args[0]
            elif isinstance(node, ast.Call) and _name(node) in REFUSALS and node.args:
                yield f"{where}:{node.lineno}", node.args[0]
            elif isinstance(node, ast.Dict) and where.startswith(HTTP):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "error":
                        yield f"{where}:{node.lineno}", value


def _is_member(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "Code")


def _is_passed_on(expr: ast.expr) -> bool:
    """A refusal's own code handed on (``exc.code``), or a parameter (the functions that
    build the refusals)."""
    return ((isinstance(expr, ast.Attribute) and expr.attr == "code")
            or (isinstance(expr, ast.Name) and expr.id == "code"))


def _members_used() -> set[str]:
    used = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if _is_member(node):
                assert isinstance(node, ast.Attribute)
                used.add(node.attr)
    return used


def _table() -> list[str]:
    """The codes of the table under ``## Errors`` in docs/protocol.md, in its order."""
    text = PROTOCOL_MD.read_text()
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)`", section, re.M)


def test_every_code_is_named_from_the_enum() -> None:
    """No refusal and no error answer carries a bare string for its code."""
    bare = [f"{where}: {ast.unparse(expr)}" for where, expr in _code_args()
            if not (_is_member(expr) or _is_passed_on(expr))]
    assert not bare, "codes not taken from solrace.core.errors.Code:\n" + "\n".join(bare)


def test_every_member_is_sent() -> None:
    """Every member of the enum is a code the server sends somewhere."""
    unused = {c.name for c in Code} - _members_used()
    assert not unused, f"codes the server never sends: {sorted(unused)}"


def test_the_table_lists_every_code_and_only_them() -> None:
    table = set(_table())
    assert table, "no table under '## Errors' in docs/protocol.md"
    enum = {c.value for c in Code}
    assert enum - table == set(), f"codes missing from docs/protocol.md's table: {enum - table}"
    assert table - enum == set(), f"codes in the table the server never sends: {table - enum}"


def test_a_member_is_its_wire_string() -> None:
    """The wire is unchanged: a member encodes as the bare string it replaced."""
    from solrace.protocol import codec, messages

    msg = messages.error(Code.NOT_FOUND, "no race 'x'", 7)
    assert codec.encode_json(msg) == (b'{"type":"error","code":"not_found",'
                                      b'"message":"no race \'x\'","rid":7}')
    assert codec.encode_msgpack(msg) == codec.encode_msgpack(
        {"type": "error", "code": "not_found", "message": "no race 'x'", "rid": 7})
