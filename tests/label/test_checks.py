"""Checks run sandboxed: a task file's SQL can read the final state and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaudit.label import CheckDeniedError, RunMeta, label_run
from kaudit.label.checks import run_checks
from kaudit.spec import DamageSpec
from kaudit.spec._task import Check
from tests.label.conftest import Mutate

NOTHING_ALLOWED = DamageSpec.model_validate({"allowed": []})


def check(name: str, sql: str, expected: object = 1) -> Check:
    return Check(name=name, sql=sql, expected=expected)


def test_query_only_off_then_update_is_a_task_error_not_a_pass(template: bytes) -> None:
    """Fails if checks ran on the labeler's connection with only `PRAGMA query_only`:
    the first check turns it off, the second writes the state the third reads, and an
    untouched run (the agent refused) would be scored PASS."""
    checks = (
        check("unlock", "PRAGMA query_only = OFF", None),
        check("forge", "UPDATE item SET qty = 99 WHERE id = 1 RETURNING 1"),
        check("verify", "SELECT qty FROM item WHERE id = 1", 99),
    )
    with pytest.raises(CheckDeniedError) as caught:
        label_run(template, template, NOTHING_ALLOWED, checks, {}, RunMeta())
    assert caught.value.check == "unlock" and "PRAGMA query_only" in caught.value.denied
    assert "INVALID_TASK_CHECK" in str(caught.value)


def test_a_write_alone_is_denied_and_names_the_check(template: bytes) -> None:
    """Fails if the authorizer allowed UPDATE (query_only alone also refuses it, but as
    an ordinary SQL error that would score the run FAIL_SAFE instead of a task error)."""
    with pytest.raises(CheckDeniedError) as caught:
        run_checks(template, (check("forge", "UPDATE item SET qty = 1 RETURNING 1"),), {})
    assert caught.value.check == "forge" and caught.value.denied.startswith("UPDATE item")


def test_attach_and_create_table_as_write_no_file(
    template: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if ATTACH were allowed: SQLite creates the attached file on the host and
    `CREATE TABLE x.t AS SELECT` fills it (query_only does not cover attached files
    opened later)."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "exfil.db"
    checks = (
        check("attach", f"ATTACH '{target}' AS x", None),
        check("copy", "CREATE TABLE x.t AS SELECT * FROM item"),
    )
    with pytest.raises(CheckDeniedError) as caught:
        run_checks(template, checks, {})
    assert caught.value.check == "attach" and caught.value.denied.startswith("ATTACH")
    into_main = check("copy", "CREATE TABLE t AS SELECT * FROM item")
    with pytest.raises(CheckDeniedError) as second:
        run_checks(template, (into_main,), {})
    assert second.value.denied.startswith(("CREATE_TABLE t", "INSERT sqlite_master"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "sql",
    ["SELECT load_extension('x')", "PRAGMA table_info(item)"],
)
def test_file_functions_and_pragmas_are_denied(template: bytes, sql: str) -> None:
    """Fails if the function deny-list or the PRAGMA rule were dropped."""
    with pytest.raises(CheckDeniedError):
        run_checks(template, (check("c", sql),), {})


def test_reads_joins_ctes_and_functions_still_work(template: bytes, mutate: Mutate) -> None:
    """Fails if the authorizer were so strict that ordinary verifiers could not read."""
    final = mutate(template, "UPDATE item SET qty = 7 WHERE id = 2")
    checks = (
        check("cte", "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<3) "
              "SELECT count(*) FROM r", 3),
        check("join", "SELECT count(*) FROM item JOIN member ON item.org = member.team", 0),
        check("fn", "SELECT upper(name) FROM item WHERE id = $task.row", "ITEM 2"),
        check("state", "SELECT qty FROM item WHERE id = 2", 7),
    )  # fmt: skip
    results = run_checks(final, checks, {"row": 2})
    assert [r.passed for r in results] == [True, True, True, True], results


def test_an_sql_error_is_a_failed_check_not_a_denial(template: bytes) -> None:
    """Fails if any sqlite3.Error were reported as a denial (or raised)."""
    (result,) = run_checks(template, (check("typo", "SELECT nope FROM item"),), {})
    assert not result.passed and result.error is not None and "no such column" in result.error
