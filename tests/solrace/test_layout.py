"""The house's layout holds: no import circles between solrace's modules (type-only imports
included: a circle is a design problem before it is a runtime one), a core that imports
nothing of asyncio, sockets, files or stores, and a docstring for every package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import solrace

ROOT = Path(solrace.__file__).parent
#: What the core (solrace.core) may never import, directly or through another module.
IMPURE = {"asyncio", "socket", "sqlite3", "redis", "websockets", "os", "pathlib", "io",
          "threading", "subprocess", "secrets", "time", "random"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The modules a module imports at its top level (``if TYPE_CHECKING:`` blocks included;
    imports inside functions, done lazily on purpose, left out)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    package = module_name(path) if path.name == "__init__.py" else \
        module_name(path).rpartition(".")[0]

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                found.add(base)
                for alias in node.names:  # "from solrace.protocol import codec"
                    found.add(f"{base}.{alias.name}")
            elif isinstance(node, ast.If):
                visit(node.body)

    visit(tree.body)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def test_no_module_imports_itself_back_through_others() -> None:
    edges = graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            walk(node)
    assert cycles == [], "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_core_imports_nothing_of_io() -> None:
    edges = graph()
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    core = [m for m in edges if m.startswith("solrace.core")]
    reached: set[str] = set()
    todo = list(core)
    while todo:
        m = todo.pop()
        if m in reached:
            continue
        reached.add(m)
        todo += edges[m]
    allowed = ("solrace.core", "solrace.settings")
    outside = {m for m in reached if not m.startswith(allowed) and m != "solrace"}
    assert outside == set(), f"the core reaches {sorted(outside)}"
    bad = {m: sorted(imports(modules[m]) & IMPURE) for m in reached if m != "solrace"}
    assert {m: b for m, b in bad.items() if b} == {}


def test_the_core_runs_without_asyncio() -> None:
    code = ("import sys\n"
            "import solrace.protocol.dispatch, solrace.core.race, solrace.core.tournament\n"
            "import solrace.core.views, solrace.core.shared_deal, solrace.core.quotas\n"
            "loaded = sorted(m for m in ('asyncio', 'sqlite3', 'redis', 'websockets', 'socket')"
            " if m in sys.modules)\n"
            "print(','.join(loaded))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == ""


def test_every_package_says_what_lives_there() -> None:
    for init in ROOT.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, f"{init} has no docstring"


def test_no_module_is_named_after_a_library_or_the_standard_library() -> None:
    taken = set(sys.stdlib_module_names) | {"redis", "websockets", "msgpack", "orjson",
                                              "solrules", "hypothesis"}
    clashes = [p for p in ROOT.rglob("*.py") if p.stem in taken]
    assert clashes == []
