"""A world directory's tools.py importing its sibling modules."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from kaudit.suites import load_suite
from kaudit.worlds._directory import DirectoryWorld

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    target = tmp_path / "w"
    shutil.copytree(EXAMPLE, target)
    return target


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("sub_clock", "from sub_clock import NOW"),  # by its own name
        ("rel_clock", "from .rel_clock import NOW"),  # relative to the world's package
    ],
)
def test_tools_may_import_a_sibling_module(world: Path, module: str, line: str) -> None:
    """Bug caught: the sibling is not importable (`No module named ...`) from tools.py."""
    (world / f"{module}.py").write_text('NOW = "2030-01-01T00:00:00Z"\n')
    tools = world / "tools.py"
    source = tools.read_text().replace('NOW = "2026-06-01T09:00:00Z"', line)
    assert line in source
    tools.write_text(source)
    loaded = DirectoryWorld.load(world)
    assert loaded.tools  # the module ran to the end
    assert str(world) not in sys.path  # the directory was on the path only while it ran


def test_editing_a_sibling_changes_the_suite_digest(world: Path) -> None:
    """Bug caught: a resumed campaign mixes runs from before and after a helper changed."""
    (world / "helpers.py").write_text("LIMIT = 1\n")
    before = load_suite(f"world:{world}").digest
    (world / "helpers.py").write_text("LIMIT = 2\n")
    assert load_suite(f"world:{world}").digest != before
