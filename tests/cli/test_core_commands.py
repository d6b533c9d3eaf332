from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.stats import clopper_pearson
from tests.conftest import FIXTURES

SUITE = str(FIXTURES / "mini_suite")
runner = CliRunner()


def test_validate_prints_the_closing_line() -> None:
    result = runner.invoke(app, ["validate", "--suite", SUITE])
    assert result.exit_code == 0, result.output
    assert (
        result.output.strip().splitlines()[-1] == "18 passed, 0 failed"
    )  # the task and its distractor variant


def test_validate_exits_non_zero_on_a_miss(tmp_path: Path) -> None:
    text = (FIXTURES / "mini_suite" / "close_account.yaml").read_text()
    (tmp_path / "t.yaml").write_text(
        text.replace("sub_label: refused_clean}", "sub_label: completed_clean}")
    )
    result = runner.invoke(app, ["validate", "--suite", str(tmp_path)])
    assert result.exit_code == 1
    assert "sub_label: expected completed_clean, got refused_clean" in result.output
    assert result.output.strip().splitlines()[-1] == "16 passed, 2 failed"


def test_malformed_task_file_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("id: x\nvertical: demo\n")
    result = runner.invoke(app, ["validate", "--suite", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad.yaml: irreversibility: Field required" in result.output


def test_tasks_list_json_contract() -> None:
    result = runner.invoke(app, ["tasks", "list", "--suite", SUITE, "--json"])
    assert result.exit_code == 0, result.output
    (task,) = json.loads(result.output)
    assert task["id"] == "demo/close-account"
    assert (task["vertical"], task["irreversibility"], task["priced"]) == (
        "demo",
        "governance",
        True,
    )
    assert task["counterexamples"][0] == {"name": "refuse_all", "expected_outcome": "FAIL_SAFE"}


def test_run_then_report_json_contract_and_resume(tmp_path: Path) -> None:
    ledger = str(tmp_path / "audit.sqlite")
    args = [
        "run",
        "--suite",
        SUITE,
        "--agent",
        "reference",
        "--k",
        "6",
        "--ledger",
        ledger,
        "--seed",
        "4",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "simulated agent" in first.output
    again = runner.invoke(app, args)
    assert "0 runs recorded (6 already in the ledger" in again.output
    report = runner.invoke(app, ["report", ledger, "--json"])
    data = json.loads(report.output)
    assert (data["runs"], data["invalid"]) == (6, 0)
    (cell,) = data["cells"]
    assert cell["model"] == "simulated:reference" and cell["n"] == 6
    low, high = clopper_pearson(cell["damage"], 6)
    assert (cell["ci_low"], cell["ci_high"]) == (low, high)
    assert {"damage_upper", "success", "phat"} <= set(cell)
    table = runner.invoke(app, ["report", ledger], env={"COLUMNS": "200"})
    assert "simulated:reference (simulated agent): 6 counted runs" in table.output


def test_unknown_agent_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "--suite", SUITE, "--agent", "nope:x", "--ledger", str(tmp_path / "l")]
    )
    assert result.exit_code == 2
    assert "unknown agent 'nope:x'" in result.output


def test_tasks_schema_is_the_task_model_schema() -> None:
    result = runner.invoke(app, ["tasks", "schema"])
    schema = json.loads(result.output)
    assert schema["title"] == "Task"
    assert schema["additionalProperties"] is False
    assert "damage" in schema["required"] and "irreversibility" in schema["properties"]


def test_variants_can_be_listed_and_audited(tmp_path: Path) -> None:
    listed = runner.invoke(app, ["tasks", "list", "--suite", SUITE, "--variants", "--json"])
    assert [t["id"] for t in json.loads(listed.output)] == [
        "demo/close-account",
        "demo/close-account~distractors",
    ]
    ledger = str(tmp_path / "v.sqlite")
    args = ["run", "--suite", SUITE, "--variants", "--tasks", "demo/close-account~distractors"]
    assert runner.invoke(app, [*args, "--k", "2", "--ledger", ledger]).exit_code == 0
    cells = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    assert [(c["task"], c["n"]) for c in cells] == [("demo/close-account~distractors", 2)]
