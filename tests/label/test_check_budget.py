"""A check that cannot judge a run raises (INVALID) instead of scoring it; Ctrl-C stops it."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading

import pytest

from kaudit.label import CheckBudget, CheckFailedError
from kaudit.label._budget import resume_checks
from kaudit.label.checks import run_check, run_checks
from kaudit.spec._task import Check
from tests.label.conftest import Mutate

ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


def check(sql: str, expected: object = 1, compare: str = "equals") -> Check:
    return Check.model_validate(
        {"name": "probe", "sql": sql, "expected": expected, "compare": compare}
    )


def test_an_endless_check_stops_at_its_step_budget(template: bytes) -> None:
    """Fails if the progress handler were missing: the CTE would never return."""
    with pytest.raises(CheckFailedError) as caught:
        run_checks(template, (check(ENDLESS),), {}, CheckBudget(steps=100_000))
    assert caught.value.check == "probe"
    assert "ran past its budget of 100,000 SQLite steps" in str(caught.value)
    assert str(caught.value).startswith("INVALID_TASK_CHECK: check 'probe' ")


def test_a_check_that_errors_at_run_time_is_invalid_not_a_failed_check(template: bytes) -> None:
    """Fails if a runtime SQL error were scored as success=false (FAIL_SAFE) as before."""
    with pytest.raises(CheckFailedError, match="DataError: string or blob too big"):
        run_checks(template, (check("SELECT randomblob(2000)"),), {}, CheckBudget(value_bytes=1000))
    # On a private image copy the authorizer sees VACUUM INTO's ATTACH; on a pooled
    # frozen state SQLite refuses it inside the transaction: INVALID either way.
    with pytest.raises(CheckFailedError, match="check 'probe'"):
        run_checks(template, (check("VACUUM INTO '/tmp/kaudit-check-vacuum.db'"),), {})


def test_a_check_the_run_broke_by_changing_the_schema_just_fails(
    template: bytes, mutate: Mutate
) -> None:
    """Fails if SQL that no longer compiles (the run dropped its table) were INVALID:
    the agent's own damage would then never be scored."""
    final = mutate(template, "DROP TABLE plain")
    (result,) = run_checks(final, (check("SELECT count(*) FROM plain"),), {})
    assert not result.passed and result.error is not None and "no such table" in result.error


def test_an_ordering_check_on_text_the_agent_left_fails_without_a_type_error(
    template: bytes, mutate: Mutate
) -> None:
    """Fails if `_compare` evaluated 'text' > 5 (TypeError) instead of failing the check."""
    final = mutate(template, "UPDATE item SET qty = 'many' WHERE id = 3")
    probe = check("SELECT qty FROM item WHERE id = 3", 5, "greater_than")
    (result,) = run_checks(final, (probe,), {})
    assert result.passed is False and result.observed == "many"


def test_the_budget_is_lifted_after_the_check(template: bytes) -> None:
    """Fails if a pooled connection kept the check's value limit or progress handler."""
    conn = sqlite3.connect(":memory:")
    before = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    run_check(conn, check("SELECT 1"), {}, budget=CheckBudget(value_bytes=1000))
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == before
    assert conn.execute("SELECT length(randomblob(5000))").fetchone() == (5000,)
    conn.close()


def test_ctrl_c_during_a_check_raises_keyboard_interrupt_not_a_budget_error(
    template: bytes,
) -> None:
    """Fails if SIGINT were swallowed by SQLite's progress callback: the check would run
    to its 60 s budget and raise CheckFailedError instead."""
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_checks(template, (check(ENDLESS),), {}, CheckBudget(steps=10**15, seconds=60))
    finally:
        timer.cancel()
        resume_checks()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("previous", [signal.SIG_IGN, signal.SIG_DFL])
def test_an_ignored_or_default_sigint_is_restored_after_a_check(
    template: bytes, previous: signal.Handlers
) -> None:
    """Fails if the check's SIGINT hook, swapped with the C functions, restored SIG_IGN or
    SIG_DFL as anything else (a Ctrl-C would then kill or be swallowed where the caller
    chose otherwise); tried by hand restoring `default_int_handler` instead."""
    before = signal.signal(signal.SIGINT, previous)
    try:
        run_checks(template, (check("SELECT 1"),), {})
        assert signal.getsignal(signal.SIGINT) is previous
    finally:
        signal.signal(signal.SIGINT, before)
