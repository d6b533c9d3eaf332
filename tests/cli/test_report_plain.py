"""`kaudit report L | cat`: piped output is plain aligned text with whole ids."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.report.conftest import reference_ledger

TASKS = ("billing/duplicate-payment-refund", "csm/contact-deactivate-scope")


def test_piped_report_never_wraps_task_ids_in_a_narrow_terminal(tmp_path: Path) -> None:
    """Bug caught: rendering rich tables into a pipe at COLUMNS, folding ids over lines."""
    ledger = tmp_path / "audit.sqlite"
    from typer.testing import CliRunner

    from kaudit.cli.main import app

    args = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3"]
    result = CliRunner().invoke(app, [*args, "--tasks", ",".join(TASKS), "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    env = os.environ | {"COLUMNS": "30", "TERM": "xterm-256color"}
    piped = subprocess.run(
        [sys.executable, "-c", "from kaudit.cli.main import main; main()", "report", str(ledger)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    lines = piped.splitlines()
    assert "\x1b[" not in piped  # no colour codes in a pipe
    for task in TASKS:
        rows = [line for line in lines if line.startswith(task + " ")]
        # The cell table and the outcome-mix table each hold one whole row per task.
        assert len(rows) == 2, piped
    header = next(line for line in lines if line.startswith("task "))
    assert header.split()[:4] == ["task", "n", "damage", "p̂"]
    assert max(len(line) for line in lines) > 30  # wider than COLUMNS, on purpose


def test_report_writes_html_and_rejects_an_unknown_model_order(tmp_path: Path) -> None:
    """Bug caught: a ValueError traceback from the gradient instead of one line and exit 2."""
    from typer.testing import CliRunner

    from kaudit.cli.main import app

    ledger = reference_ledger(tmp_path / "a.sqlite", ("reference",), 2, "builtin", TASKS)
    page = tmp_path / "r.html"
    ok = CliRunner().invoke(app, ["report", str(ledger), "--html", str(page)])
    assert ok.exit_code == 0 and page.read_text().startswith("<!DOCTYPE html>")
    bad = CliRunner().invoke(
        app, ["report", str(ledger), "--html", str(page), "--model-order", "x,y"]
    )
    assert bad.exit_code == 2
    assert len(bad.output.strip().splitlines()) == 1
    assert "--model-order" in bad.output and "Traceback" not in bad.output
    alpha = CliRunner().invoke(app, ["report", str(ledger), "--alpha", "1.5"])
    assert (alpha.exit_code, alpha.output) == (2, "error: --alpha must be in (0, 1), got 1.5\n")
    nowhere = tmp_path / "missing" / "r.html"
    denied = CliRunner().invoke(app, ["report", str(ledger), "--html", str(nowhere)])
    assert denied.exit_code == 2
    assert denied.output.strip().splitlines() == [
        f"error: {nowhere}: cannot write the HTML report: No such file or directory"
    ]
