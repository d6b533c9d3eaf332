"""The real local model (SmolLM2-135M on llama-server) as a judge, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaudit.agents.chat.local import LocalServer
from kaudit.cli.main import app
from kaudit.ledger import read_grades, verify_ledger
from tests.grade.conftest import grade, run_ledger, runner
from tests.realmodel import model_config

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


def test_the_local_model_grades_a_ledger_and_the_report_measures_it(
    llama_server: LocalServer, tmp_path: Path
) -> None:
    """Four runs (reference ×2, delete_held ×2) graded by the real judge, then reported.

    Fails if a real server's reply (or its structured-output grammar) is not read into a
    grade or a recorded failure, if grading is not resumable against it, or if the report
    loses the judge table. The answers themselves are the model's and are not pinned.
    """
    ledger = run_ledger(tmp_path / "audit.sqlite", k=2)
    judge = model_config(
        tmp_path / "judge.yaml", llama_server, "smollm2-judge", temperature=0.0, max_tokens=96
    )
    first = grade(ledger, judge)
    assert first.exit_code == 0, first.output
    grades = read_grades(ledger).grades
    assert len(grades) == 4
    for g in grades:
        assert g.status == "graded" or (g.failure or "").startswith(("malformed", "api_error"))
        if g.raw_reply is not None:
            assert g.output_tokens > 0
    again = grade(ledger, judge)
    assert "0 graded, 0 failed (recorded, never counted), 4 already graded" in again.output
    verify_ledger(ledger)
    report = runner.invoke(app, ["report", str(ledger), "--json"])
    judges = json.loads(report.output)["judges"]
    overall = next(j for j in judges if j["cell"] is None)
    assert overall["judge"] == "smollm2-judge"
    assert overall["failed"] + sum(overall["confusion"].values()) == 4
