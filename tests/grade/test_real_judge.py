"""The real local model (SmolLM2-135M on llama.cpp's server) as a judge, end to end.

The test runs the commands docs/grading.md quotes for llama-server, on the session's
`local_server` (the server the quoted `python -m kaudit.agents.chat.local` line starts,
with a default reply length of 160 tokens instead of 256; both model YAMLs set their
`max_tokens`), and checks its own output with the function that checks the quoted one,
so the page cannot drift from what the commands print.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from kaudit.agents.chat.local import LocalServer
from kaudit.cli.main import app
from kaudit.ledger import ledger_head, verify_ledger
from kaudit.ledger._grades import read_grades
from tests.grade.conftest import runner
from tests.grade.grading_doc import ROOT, check_output, measurements
from tests.realmodel import model_config

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

AGENT = {"temperature": 0.6, "max_tokens": 128}
"""`smollm2.yaml` as docs/grading.md describes it (the rest: `model_config`'s defaults)."""
JUDGE = {"temperature": 0.0, "max_tokens": 96}
"""`judge.yaml` as docs/grading.md describes it."""


def _documented_commands() -> list[list[str]]:
    """The `python k.py ...` lines of the llama-server measurement, as argument lists."""
    [measured] = [m for m in measurements() if "llama-server" in m.title]
    commands = [shlex.split(line) for line in measured.commands]
    return [args[2:] for args in commands if args[:2] == ["python", "k.py"]]


def test_the_documented_run_grades_a_real_model_campaign_with_the_real_judge(
    local_server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real model's own campaign, beside reference and delete_held runs, graded by the
    real model as judge, then reported.

    Fails if a real server's reply (or its structured-output grammar) is not read into a
    grade or a recorded failure, if grading is not resumable against it, if the report
    loses the judge table, or if the output no longer has the shape docs/grading.md
    quotes (its summary line, header, rows and the anchor naming both chain heads). The
    answers themselves are the model's and are not pinned.
    """
    model_config(tmp_path / "smollm2.yaml", local_server, "smollm2", **AGENT)
    model_config(tmp_path / "judge.yaml", local_server, "smollm2-judge", **JUDGE)
    monkeypatch.chdir(tmp_path)
    printed: list[str] = []
    for args in _documented_commands():
        args = [str(ROOT / a) if a.startswith("tests/") else a for a in args]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        if args[0] in ("grade", "report"):
            printed += result.output.splitlines()
    summary, rows = check_output(printed)
    [measured] = [m for m in measurements() if "llama-server" in m.title]
    quoted, quoted_rows = check_output(measured.output)
    assert summary["key"] == quoted["key"]
    assert [r.grader for r in rows] == [r.grader for r in quoted_rows]

    ledger = tmp_path / "real3.sqlite"
    grades = read_grades(ledger).grades
    assert int(summary["graded"]) + int(summary["failed"]) == len(grades) == 5
    assert {g.model for g in grades} >= {"smollm2"}  # the real model's own runs are graded
    for g in grades:
        assert g.status == "graded" or (g.failure or "").startswith(("malformed", "api_error"))
        if g.raw_reply is not None:
            assert g.output_tokens > 0
    judge = str(tmp_path / "judge.yaml")
    again = runner.invoke(app, ["grade", str(ledger), "--judge", judge, "--suite",
                                str(ROOT / "tests/fixtures/mini_suite")])  # fmt: skip
    assert "0 graded, 0 failed (recorded, never counted), 5 already graded" in again.output
    verify_ledger(ledger, ledger_head(ledger))
    report = runner.invoke(app, ["report", str(ledger), "--json"])
    overall = next(j for j in json.loads(report.stdout)["judges"] if j["cell"] is None)
    assert overall["judge"] == "smollm2-judge"
    assert overall["failed"] + sum(overall["confusion"].values()) == 5
