"""Only `kaudit.open` opens a ledger file for reading; every reader takes what it read.

Six readers each used to open, verify and then re-read the ledger their own way, and
what they re-read (through an index, past the anchor) was not what was verified. This
test lists every place in the library that opens a ledger read-only, so a new reader
that opens the file itself fails here instead of in an adversary's hands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kaudit

SOURCE = Path(kaudit.__file__).parent

OPENERS = {
    "ledger/_snapshot.py": "kaudit.open itself (open_ledger; ledger_head, the file's form "
    "checked; open_rows for the two below)",
    "ledger/_grades.py": "read_grades(path) opens the file for grades_of; no reader calls it "
    "(the snapshot reads grades on its own open ledger)",
}
"""Modules that open a ledger file read-only, each with why."""

UNCHECKED_ROWS = {
    "report/_viewer_build.py": "the run viewer built by a forked process beside the read, "
    "kept only when each row it shows hashes to what the verified read computed",
    "report/_report.py": "the page's viewer of a report whose snapshot was closed, each row "
    "checked against the hash the snapshot verified for it",
}
"""Modules that read rows through `open_rows` (no check), each with why."""


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            found.append((name, node))
    return found


def _opens_readonly(name: str, call: ast.Call) -> bool:
    if name == "Ledger":
        return any(
            k.arg == "readonly" and not (isinstance(k.value, ast.Constant) and not k.value.value)
            for k in call.keywords
        )
    # the path-taking functions, not `walk_grades(ledger)` (a ledger the caller holds)
    return isinstance(call.func, ast.Name) and name in ("_readonly", "read_grades", "verify_grades")


def test_only_the_snapshot_module_opens_a_ledger_for_reading() -> None:
    """Fails if any module outside `kaudit.ledger._snapshot` (and the grades module that
    defines the path-based grade read) opens a ledger read-only: `Ledger(...,
    readonly=True)`, `read_grades(path)`, `verify_grades(path)` (tried by hand: putting
    `Ledger(path, readonly=True)` back into `gate/_evidence.py` fails here)."""
    openers: set[str] = set()
    unchecked: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        module = path.relative_to(SOURCE).as_posix()
        for name, call in _calls(ast.parse(path.read_text())):
            if _opens_readonly(name, call):
                openers.add(module)
            if name == "open_rows":
                unchecked.add(module)
    assert openers <= set(OPENERS), sorted(openers - set(OPENERS))
    assert unchecked == set(UNCHECKED_ROWS), sorted(unchecked ^ set(UNCHECKED_ROWS))
