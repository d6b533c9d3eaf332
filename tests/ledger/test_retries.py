"""Only an INVALID run is retried, as the next attempt; no record follows a verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, RunRecord, read_runs, verify_ledger
from tests.ledger.test_tamper_matrix import _append


def _run(attempt: int, labeled: bool) -> RunRecord:
    fields = {"outcome": "PASS", "success": True} if labeled else {"invalid_reason": "boom"}
    return RunRecord(
        campaign="c", model="m", task="t", run_index=0, seed=0, attempt=attempt,
        status="labeled" if labeled else "invalid", **fields,
    )  # fmt: skip


def test_the_writer_refuses_a_record_after_a_verdict_and_an_attempt_gap(tmp_path: Path) -> None:
    """Fails if `Ledger.append` lets a finished run be recorded again (its verdict would be
    replaced in every count) or lets a retry skip an attempt number."""
    with Ledger(tmp_path / "l.sqlite") as ledger:
        ledger.append(_run(0, labeled=False))
        with pytest.raises(LedgerError, match="skips attempt 1"):
            ledger.append(_run(2, labeled=True))
        ledger.append(_run(1, labeled=True))  # the honest retry
        for attempt, labeled in ((2, True), (2, False)):
            with pytest.raises(LedgerError, match="already recorded with a verdict"):
                ledger.append(_run(attempt, labeled))
        assert [r.attempt for r in read_runs(ledger).runs] == [1]


def test_verify_refuses_an_attempt_gap_and_readers_keep_the_first_verdict(
    tmp_path: Path,
) -> None:
    """Fails if verify accepts a run whose attempts skip a number, or if a reader told not
    to verify lets a later record replace a run's verdict."""
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        ledger.append(_run(0, labeled=False))
    _append(path, [_run(2, labeled=True).model_dump(mode="json")])
    with pytest.raises(LedgerError, match="record 2: run c/m/t #0 is attempt 2 where attempt 1"):
        verify_ledger(path)
    forged = _run(3, labeled=False).model_dump(mode="json")
    _append(path, [forged])
    with Ledger(path, readonly=True) as ledger:
        [counted] = read_runs(ledger, verify=False).runs
        assert (counted.attempt, counted.status) == (2, "labeled")
        [record] = list(ledger.records())
        assert (record.attempt, record.status) == (2, "labeled")
