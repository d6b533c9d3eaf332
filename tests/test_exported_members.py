"""Every name a package exports exists, with no duplicates."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "kaudit",
    "kaudit.spec",
    "kaudit.substrate",
    "kaudit.tools",
    "kaudit.postgres",
    "kaudit.label",
    "kaudit.agents",
    "kaudit.harness",
    "kaudit.ledger",
    "kaudit.suites",
    "kaudit.report",
    "kaudit.stats",
    "kaudit.worlds",
    "kaudit.gateway",
    "kaudit.faults",
    "kaudit.boundary",
    "kaudit.gate",
    "kaudit.monitor",
    "kaudit.serve",
    "kaudit.proxy",
    "kaudit.integrations",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_exported_members_exist(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported)  # order is enforced by ruff RUF022
    missing = [member for member in exported if not hasattr(module, member)]
    assert missing == []


def test_label_and_stats_import_nothing_from_the_harness_agents_or_cli() -> None:
    import ast
    from pathlib import Path

    root = Path(importlib.import_module("kaudit").__file__).parent  # type: ignore[arg-type]
    forbidden = ("kaudit.harness", "kaudit.agents", "kaudit.cli", "kaudit.ledger")
    for room in ("label", "stats"):
        for path in (root / room).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    assert not node.module.startswith(forbidden), f"{path}: imports {node.module}"


@pytest.mark.parametrize("room", ["kaudit.tools", "kaudit.postgres", "kaudit.substrate"])
def test_each_room_imports_first_in_a_fresh_interpreter(room: str) -> None:
    """Fails if `kaudit.substrate` imports `kaudit.tools` or `kaudit.postgres` at import
    time (both import it, so whichever is imported first would find the other half-built),
    or if importing the PostgreSQL package loads psycopg (a SQLite user needs no driver)."""
    import subprocess
    import sys

    code = f"import sys, {room}; assert 'psycopg' not in sys.modules, 'psycopg loaded'"
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_moved_names_still_import_from_substrate_with_a_warning() -> None:
    """Fails if a name that left `kaudit.substrate` (a world's `tools.py` written against
    the old docs imports `tool` from there) stops resolving, resolves to a copy, or stops
    saying where it went."""
    import kaudit.postgres
    import kaudit.substrate
    import kaudit.tools

    for name, home in [("tool", kaudit.tools), ("prune_postgres", kaudit.postgres)]:
        with pytest.warns(DeprecationWarning, match=f"import it from {home.__name__}"):
            assert getattr(kaudit.substrate, name) is getattr(home, name)
    with pytest.raises(AttributeError):
        kaudit.substrate.no_such_name  # noqa: B018
