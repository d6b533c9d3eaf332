"""The numbers in docs/authority.md come from running the command it shows."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kaudit.cli.main import app

DOC = Path(__file__).parent.parent / "docs" / "authority.md"


def example_block() -> str:
    text = DOC.read_text()
    start = text.index("<!-- authority-example -->")
    return text[start : text.index("<!-- /authority-example -->")]


def test_the_documented_fault_counts_and_gate_lines_are_reproduced(tmp_path: Path) -> None:
    """Fails if the doc's numbers go stale after a change to faults, tasks or the gate."""
    ledger = str(tmp_path / "L.sqlite")
    runner = CliRunner()
    args = ["run", "--suite", "builtin", "--agent", "reference", "--k", "4"]
    result = runner.invoke(app, [*args, "--faults", "ack_lost_after_commit", "--ledger", ledger])
    assert result.exit_code == 0, result.output
    report = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)
    part = {key: report[key] for key in ("faults", "fault_outcomes", "boundary_attempts")}
    block = example_block()
    assert json.dumps(part) in block
    for authority, code in (("propose", 0), ("autonomous_write", 3)):
        out = runner.invoke(app, ["gate", ledger, "--authority", authority], env={"COLUMNS": "200"})
        assert out.exit_code == code
        assert out.output.splitlines()[0] in block
    decision = json.loads(
        runner.invoke(app, ["gate", ledger, "--authority", "autonomous_write", "--json"]).output
    )
    first = next(r for r in decision["reasons"] if r["rule"] == "max_damage_upper")
    assert json.dumps(first) in block
