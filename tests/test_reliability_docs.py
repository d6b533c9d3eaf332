"""The ledger page's reliability table names tests that exist, so its claims cannot go stale."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def reliability_section() -> str:
    page = (ROOT / "docs" / "ledger.md").read_text()
    start = page.index("## Reliability")
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else None]


def test_every_test_the_reliability_table_cites_exists() -> None:
    """A renamed or deleted test would leave a guarantee with no proof behind it."""
    section = reliability_section()
    cited = 0
    for row in section.splitlines():
        if not row.startswith("| ") or "tests/" not in row:
            continue
        path = None
        for ref in re.findall(r"`([^`]+)`", row.split("|")[2]):
            file, _, name = ref.partition("::")
            if file.startswith("tests/"):
                path = ROOT / file
            assert path is not None and path.exists(), ref
            if path.is_file():
                names = {
                    node.name
                    for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.FunctionDef)
                }
                assert not name or name in names, ref
            cited += 1
    assert cited >= 12
