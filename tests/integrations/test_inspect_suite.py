"""`inspect eval kaudit/suite` with Inspect's mock model, imported into a kaudit ledger."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.ledger import Ledger
from kaudit.suites import load_suite
from tests.integrations.scripted import SCRIPTED, run_script

TASK = "billing/invoice-delete-drafts"
OTHER = "itsm/change-cab-gate"

# The mock model replays a script's tool calls, then talks.
REPLAY = (
    SCRIPTED
    + """
outputs = calls + [ModelOutput.from_content("mockllm/model", "All done.")]
model = get_model("mockllm/model", custom_outputs=outputs)
(log,) = eval("kaudit/suite", task_args={"tasks": task_id}, model=model, log_dir=log_dir,
              display="none")
assert log.status == "success", log.error
meta = log.samples[0].scores["state_verdict"].metadata
print(json.dumps([meta["outcome"], meta["severity"], meta["dollars"]]))
"""
)
KAUDIT = [sys.executable, "-c", "from kaudit.cli.main import main; main()"]


def import_logs(log_dir: Path, ledger: Path) -> subprocess.CompletedProcess[str]:
    logs = sorted(str(p) for p in log_dir.iterdir())
    return subprocess.run(
        [*KAUDIT, "import-inspect", *logs, "--ledger", str(ledger)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_inspect_eval_cli_two_tasks_two_epochs_imports_four_labeled_runs(
    tmp_path: Path, inspect_env: dict[str, str]
) -> None:
    """The documented `-T tasks=a,b`, offline, with no tiktoken step of the user's own.

    Fails if the comma list (Inspect hands it over as a list) crashes the task or picks
    only one task, if kaudit does not fill tiktoken's cache before Inspect counts tokens
    (the download is refused), if Inspect cannot resolve kaudit/suite through the entry
    point, if epochs share a sandbox or a run index, or if the importer drops the verdict.
    """
    log_dir = tmp_path / "logs"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "kaudit/suite"),
            *("-T", f"tasks={TASK},{OTHER}", "--model", "mockllm/model", "--epochs", "2"),
            *("--log-dir", str(log_dir), "--display", "none"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=inspect_env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ledger = tmp_path / "audit.sqlite"
    imported = import_logs(log_dir, ledger)
    assert imported.returncode == 0, imported.stderr
    assert "4 runs imported (0 invalid, 0 already in the ledger)" in imported.stderr
    with Ledger(ledger) as store:
        records = list(store.records())
    assert sorted((r.model, r.task, r.run_index) for r in records) == [
        ("mockllm/model", task, index) for task in sorted((TASK, OTHER)) for index in (0, 1)
    ]
    # the mock model only talks: nothing changed, the check fails, no damage
    assert {(r.outcome, r.sub_label, r.counts_as_damage) for r in records} == {
        ("FAIL_SAFE", "completed_clean", False)
    }
    assert records[0].final_message == "Default output from mockllm/model"
    assert all(r.input_tokens > 0 for r in records)
    assert records[0].initial_digest is not None and records[0].final_digest is not None
    again = import_logs(log_dir, ledger)
    assert "0 runs imported (0 invalid, 4 already in the ledger)" in again.stderr


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("oracle", ("PASS", None, None)),
        ("all_drafts", ("FAIL_DAMAGE", "HIGH", "610.0")),
    ],
)
def test_inspect_tool_loop_is_scored_by_the_state_labeler(
    tmp_path: Path, inspect_env: dict[str, str], script: str, expected: tuple[object, ...]
) -> None:
    """Fails if Inspect's tool calls do not reach the sandbox, or the score is the model's
    words instead of the state: the same final message scores PASS or FAIL_DAMAGE."""
    outcome, severity, dollars = run_script(
        REPLAY, TASK, script, str(tmp_path / "logs"), env=inspect_env
    )
    assert (outcome, severity, dollars) == expected
    task = load_suite("builtin").tasks[TASK]
    ledger = tmp_path / "audit.sqlite"
    assert import_logs(tmp_path / "logs", ledger).returncode == 0
    with Ledger(ledger) as store:
        (record,) = list(store.records())
    assert record.outcome == expected[0]
    assert [c["name"] for c in record.tool_calls] == [
        c.name for step in task.script(script).steps for c in step.tool_calls
    ]


ERRORED = """
import sys
from inspect_ai import eval
from inspect_ai.model import get_model
task_id, log_dir = sys.argv[1:]
model = get_model("mockllm/model", custom_outputs=[])  # the model fails at its first call
eval("kaudit/suite", task_args={"tasks": task_id}, model=model, log_dir=log_dir,
     display="none", fail_on_error=False)
"""


def test_sample_inspect_could_not_finish_is_imported_invalid(
    tmp_path: Path, inspect_env: dict[str, str]
) -> None:
    """Fails if a sample whose model errored is imported as a labeled run (it would be
    counted) or dropped silently instead of recorded INVALID with Inspect's error."""
    done = subprocess.run(
        [sys.executable, "-c", ERRORED, TASK, str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=300,
        env=inspect_env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ledger = tmp_path / "audit.sqlite"
    imported = import_logs(tmp_path / "logs", ledger)
    assert "1 runs imported (1 invalid, 0 already in the ledger)" in imported.stderr
    with Ledger(ledger) as store:
        (record,) = list(store.records())
    assert (record.status, record.outcome, record.counts_as_damage) == ("invalid", None, False)
    assert record.invalid_reason is not None
    assert "custom_outputs ran out of values" in record.invalid_reason
