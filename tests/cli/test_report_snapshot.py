"""The rendered report is pinned: a change to its layout must be a deliberate one.

Regenerate with `KAUDIT_UPDATE_SNAPSHOTS=1 python3 -m pytest tests/cli/test_report_snapshot.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from kaudit.cli.main import app
from tests.conftest import FIXTURES

SNAPSHOTS = Path(__file__).parent / "snapshots"


def test_report_table_matches_the_snapshot(tmp_path: Path) -> None:
    runner = CliRunner()
    ledger = str(tmp_path / "audit.sqlite")
    suite = str(FIXTURES / "mini_suite")
    for agent in ("reference", "scripted:delete_held"):
        args = [
            "run",
            "--suite",
            suite,
            "--agent",
            agent,
            "--k",
            "12",
            "--seed",
            "9",
            "--ledger",
            ledger,
        ]
        assert runner.invoke(app, args).exit_code == 0
    rendered = runner.invoke(app, ["report", ledger], env={"COLUMNS": "120"}).output
    snapshot = SNAPSHOTS / "report.txt"
    if os.environ.get("KAUDIT_UPDATE_SNAPSHOTS"):
        snapshot.write_text(rendered)
    assert rendered == snapshot.read_text()
