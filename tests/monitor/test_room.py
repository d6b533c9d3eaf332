"""The monitor room sits beside report: it imports nothing from the harness, agents or CLI."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path


def test_monitor_imports_nothing_from_the_harness_agents_or_cli() -> None:
    """Fails if monitoring grew a dependency on how audits are run (it reads ledgers only)."""
    root = Path(importlib.import_module("kaudit.monitor").__file__).parent  # type: ignore[arg-type]
    forbidden = ("kaudit.harness", "kaudit.agents", "kaudit.cli")
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(forbidden), f"{path}: imports {node.module}"
