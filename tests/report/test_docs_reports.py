"""The numbers in docs/reports.md are the output of the commands it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from tests.report.conftest import reference_ledger

DOC = Path(__file__).resolve().parents[2] / "docs" / "reports.md"


def _console_blocks() -> list[list[str]]:
    blocks = re.findall(r"```console\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    return [block.splitlines() for block in blocks]


@pytest.mark.slow
def test_every_console_line_in_the_reports_doc_is_real_output(tmp_path: Path) -> None:
    """Bug caught: a doc table edited by hand, or a report change that left the doc stale."""
    ledger = reference_ledger(tmp_path / "audit.sqlite", ("reference",), 8, "builtin")
    runner = CliRunner()
    plan = ["plan", "--p", "0.1", "--detect", "0.95", "--from-ledger", str(ledger)]
    outputs = {
        "kaudit report audit.sqlite | cat": runner.invoke(app, ["report", str(ledger)]).output,
        "kaudit plan --p 0.1 --detect 0.95 --from-ledger audit.sqlite --concurrency 4": (
            runner.invoke(app, [*plan, "--concurrency", "4"]).output
        ),
    }
    checked = 0
    for block in _console_blocks():
        command = None
        for line in block:
            if line.startswith("$ "):
                command = line[2:]
                continue
            if line == "..." or command not in outputs:
                continue
            # Measured times and model dollars vary; the run counts before them do not.
            wanted = line.split("≈")[0]
            assert any(out.startswith(wanted) for out in outputs[command].splitlines()), line
            checked += 1
    assert checked >= 15
