"""No import cycle between the files of src/kaudit, read from their `ast`, not by running them.

Every import counts: at module level, inside a function (a deferred import is still a
dependency, only a later one) and under `TYPE_CHECKING` (a type that needs a module
above its room is the same cycle on paper). An import names the module it reads from:
`from kaudit.a import b` is an edge to `kaudit/a/b.py` when that file exists, else to
`kaudit/a/__init__.py`; importing a package is an edge to its `__init__.py`, which in
turn imports what it re-exports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

KNOWN_CYCLES: list[frozenset[str]] = []
"""Cycles that exist today and are left to other changes; any other cycle fails."""


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the kaudit package by dotted name (a package by its own name)."""
    found = {}
    for path in (src / "kaudit").rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(tree: ast.AST, package: str, known: dict[str, Path]) -> Iterator[str]:
    """The dotted names an import statement reads, resolved against `known` modules."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up `level - 1` packages
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            for alias in node.names:
                name = f"{base}.{alias.name}"
                yield name if name in known else base


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the kaudit modules it imports (anywhere in the file)."""
    known = modules(src)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for target in _imported(ast.parse(path.read_text()), package, known):
            while target and target not in known:  # `kaudit.a.b.c` attribute: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_cycle_finder_sees_a_cycle_through_a_package_and_a_deferred_import(
    tmp_path: Path,
) -> None:
    """Bug caught: the checker reading only module-level imports (a cycle closed by an
    import inside a function or under TYPE_CHECKING would pass), or not following a
    package's `__init__.py` to the module it re-exports."""
    room = tmp_path / "kaudit" / "room"
    room.mkdir(parents=True)
    (tmp_path / "kaudit" / "__init__.py").write_text("")
    (room / "__init__.py").write_text("from kaudit.room._a import A\n")
    (room / "_a.py").write_text("def f():\n    from kaudit.other import B\n")
    (tmp_path / "kaudit" / "other.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kaudit.room import A\n"
    )
    (tmp_path / "kaudit" / "alone.py").write_text("from kaudit.room import _a\n")
    assert cycles(import_graph(tmp_path)) == [
        frozenset({"kaudit.room", "kaudit.room._a", "kaudit.other"})
    ]


def test_no_file_of_kaudit_imports_itself_back() -> None:
    """Bug caught: a room importing one above it (a `Blueprint` that needs `tools/` while
    `tools/` needs `substrate/`; a ledger store calling up into readers that import it),
    which makes import order matter and the layers a fiction. A cycle listed in
    KNOWN_CYCLES is tolerated until its owner breaks it; any other fails here."""
    found = cycles(import_graph())
    new = [sorted(component) for component in found if component not in KNOWN_CYCLES]
    assert new == [], new
    gone = [sorted(known) for known in KNOWN_CYCLES if known not in found]
    assert gone == [], f"broken now, remove from KNOWN_CYCLES: {gone}"
