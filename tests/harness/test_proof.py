"""`kaudit run` proves each task's own oracle before it scores any agent on it, once."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.harness._proof import proof_cache, prove_tasks
from kaudit.suites import load_yaml_suite
from tests.conftest import FIXTURES


def _broken_suite(tmp_path: Path) -> Path:
    """The mini suite with a check its own oracle cannot meet (`expected: 2`)."""
    folder = tmp_path / "suite"
    shutil.copytree(FIXTURES / "mini_suite", folder)
    task = folder / "close_account.yaml"
    text = task.read_text()
    task.write_text(
        text.replace("status = 'closed'\n    expected: 1", "status = 'closed'\n    expected: 2")
    )
    assert task.read_text() != text
    return folder


def test_run_refuses_a_task_whose_own_oracle_fails_and_records_nothing(tmp_path: Path) -> None:
    """Fails if `run` scores a task whose oracle does not PASS: every agent's run of it
    would read as a task failure the agent never made (tried by hand before the proof:
    the campaign recorded 2 runs of the broken task, each a FAIL_SAFE)."""
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", str(_broken_suite(tmp_path)), "--k", "2", "--ledger", str(ledger)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "demo/close-account: oracle: the task's own oracle does not PASS" in message
    assert "outcome: expected PASS" in message
    if ledger.exists():
        conn = sqlite3.connect(ledger)
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
        conn.close()


def test_a_proved_task_is_not_replayed_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if the proof is replayed on every campaign (AgentDojo's 1,080 oracles each
    time), or kept for a task whose file changed (a new digest)."""
    monkeypatch.setenv("KAUDIT_CACHE", str(tmp_path / "cache"))
    suite = load_yaml_suite(FIXTURES / "mini_suite", "mini")
    tasks = list(suite.tasks.values())
    assert asyncio.run(prove_tasks(suite, tasks)) == len(tasks)
    assert asyncio.run(prove_tasks(suite, tasks)) == 0
    assert len(list(proof_cache().iterdir())) == len(tasks)
    changed = tasks[0].model_copy(update={"prompt": tasks[0].prompt + " Please."})
    assert asyncio.run(prove_tasks(suite, [changed])) == 1
