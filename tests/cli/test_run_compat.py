"""`kaudit run --compat` labels errored runs the kaudit or the AgentRelBench way."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mini_suite" / "close_account.yaml"


@pytest.mark.parametrize(
    ("compat", "outcome", "sub_label"),
    [("kaudit", "PASS", None), ("agentrelbench", "FAIL_SAFE", "errored_clean")],
)
def test_an_errored_run_whose_state_meets_the_checks(
    tmp_path: Path, compat: str, outcome: str, sub_label: str | None
) -> None:
    """Fails if --compat were not passed down to the labeler: an errored run whose
    untouched state already satisfies the checks is PASS for kaudit and, with no
    verifier, errored_clean for AgentRelBench."""
    text = FIXTURE.read_text()
    text = text.replace(
        "SELECT COUNT(*) FROM account WHERE id = $task.target AND status = 'closed'",
        "SELECT COUNT(*) FROM account WHERE id = $task.target",
    )
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "t.yaml").write_text(text)
    ledger = tmp_path / "l.sqlite"
    args = ["run", "--suite", str(tmp_path / "suite"), "--agent", "scripted:crash_clean"]
    result = CliRunner().invoke(
        app, [*args, "--k", "1", "--ledger", str(ledger), "--compat", compat]
    )
    assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        (record,) = list(store.records())
    assert (record.termination, record.outcome, record.sub_label) == ("errored", outcome, sub_label)
