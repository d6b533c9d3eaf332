"""Every name a package exports exists, with no duplicates."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "kaudit",
    "kaudit.spec",
    "kaudit.substrate",
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
