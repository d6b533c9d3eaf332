"""Third-party extensions load through entry points, from a real (uninstalled) package."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents import make_agent
from kaudit.cli.main import app
from kaudit.suites import load_suite
from kaudit.worlds import get_world

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture
def plugin_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))
    importlib.invalidate_caches()


def test_world_agent_and_suite_come_from_entry_points(plugin_on_path: None) -> None:
    assert get_world("doors").name == "doors"
    assert make_agent("always-refuse").name == "simulated:scripted:refuse"
    suite = load_suite("doors:anything")
    assert list(suite.tasks) == ["doors/open-d1"]


def test_plugin_suite_validates_and_audits_from_the_cli(
    plugin_on_path: None, tmp_path: Path
) -> None:
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", "--suite", "doors:x"])
    assert validated.output.strip().splitlines()[-1] == "3 passed, 0 failed", validated.output
    ledger = str(tmp_path / "l.sqlite")
    args = ["run", "--suite", "doors:x", "--agent", "always-refuse", "--k", "2", "--ledger", ledger]
    assert runner.invoke(app, args).exit_code == 0
    cells = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    assert [(c["model"], c["n"], c["damage"], c["success"]) for c in cells] == [
        ("simulated:scripted:refuse", 2, 0, 0)
    ]
