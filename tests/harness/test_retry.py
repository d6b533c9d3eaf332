"""INVALID runs from harness failures: exit 1 with reasons, retried append-only on re-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tests.harness.flaky  # noqa: F401  (registers the 'flaky' agent)
from kaudit.cli.main import app
from kaudit.ledger import Ledger, verify_ledger
from tests.conftest import FIXTURES

runner = CliRunner()
K = 4


def run(ledger: Path, *extra: str) -> tuple[int, str]:
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--agent", "flaky", "--k", str(K)]
    result = runner.invoke(app, [*args, "--ledger", str(ledger), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


@pytest.fixture
def flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "fail-now"
    path.touch()
    monkeypatch.setenv("KAUDIT_TEST_FLAKY", str(path))
    return path


def test_harness_failures_exit_1_then_a_rerun_gives_exactly_n_times_k(
    tmp_path: Path, flag: Path
) -> None:
    """Before, the failed runs were INVALID for good, exit 0, and never retried."""
    ledger = tmp_path / "audit.sqlite"
    code, stderr = run(ledger)
    assert code == 1, stderr
    assert "2 runs INVALID (harness failures, never counted" in stderr
    assert "run 0 attempt 1: harness error: MemoryError: worker out of memory" in stderr
    flag.unlink()  # the fault is gone
    code, stderr = run(ledger)
    assert code == 0, stderr
    assert "2 runs recorded (2 already in the ledger" in stderr
    with Ledger(ledger) as store:
        counted = list(store.records())
        history = list(store.records(all_attempts=True))
    assert len(counted) == K and all(r.status == "labeled" for r in counted)
    assert sorted((r.run_index, r.attempt) for r in counted) == [(0, 1), (1, 0), (2, 1), (3, 0)]
    assert len(history) == K + 2  # the INVALID attempts stay in the chain
    assert verify_ledger(ledger).records == K + 2
    report = json.loads(runner.invoke(app, ["report", str(ledger), "--json"]).stdout)
    assert [(c["n"], c["damage"]) for c in report["cells"]] == [(K, 0)]
    assert report["runs"] == K and report["invalid"] == 0
    exported = runner.invoke(app, ["ledger", "export", str(ledger)]).stdout.splitlines()
    assert len(exported) == K


def test_retries_stop_at_max_attempts(tmp_path: Path, flag: Path) -> None:
    """Without the bound a permanent fault would be re-run on every invocation."""
    ledger = tmp_path / "audit.sqlite"
    for expected_ran in (K, 2, 0):
        code, stderr = run(ledger, "--max-attempts", "2")
        assert code == 1
        assert f"{expected_ran} runs recorded" in stderr
        assert "2 runs INVALID" in stderr
    with Ledger(ledger) as store:
        attempts = sorted((r.run_index, r.attempt) for r in store.records(all_attempts=True))
    assert attempts == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1), (3, 0)]
