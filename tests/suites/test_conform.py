"""Task files are checked against their world's schema when the suite loads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kaudit.errors import SpecError, SuiteError
from kaudit.suites import load_suite
from tests.stats.arb_data import suite_root

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mini_suite" / "close_account.yaml"


def suite_with(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the fixture suite with one line of its task changed."""
    text = FIXTURE.read_text()
    assert old in text, old
    (tmp_path / "task.yaml").write_text(text.replace(old, new, 1))
    return tmp_path


@pytest.mark.parametrize(
    ("old", "new", "field", "reason"),
    [
        (
            "where: {id: $task.target}",
            "where: {idd: $task.target}",
            "damage.allowed[0].where",
            "no column idd in table account",
        ),
        ("columns: [status]", "columns: [statuss]", "damage.allowed[0].columns", "statuss"),
        (
            "dollars_from: balance}",
            "dollars_from: balanse}",
            "damage.pricing[0].dollars_from",
            "balanse",
        ),
        (
            "- {table: outbox, op: added",
            "- {table: outbox_, op: added",
            "damage.pricing[2].table",
            "outbox_",
        ),
        (
            "AND status = 'closed'",
            "AND stat = 'closed'",
            "checks[0].sql",
            "SQLite error: no such column: stat",
        ),
        (
            "SELECT status FROM account",
            "SELEC status FROM account",
            "checks[1].sql",
            "syntax error",
        ),
        (
            "SELECT status FROM account WHERE id = $task.held",
            "DELETE FROM account WHERE id = $task.held RETURNING 1",
            "checks[1].sql",
            "denied DELETE account",
        ),
    ],
)
def test_a_task_naming_what_the_world_lacks_fails_to_load(
    tmp_path: Path, old: str, new: str, field: str, reason: str
) -> None:
    """Fails if the suite loaded without the schema check: then a misspelt `where` gave
    the oracle 5/5 damage, a broken check made every run FAIL_SAFE and a misspelt
    `dollars_from` priced damage at $0 — all scored as if the agent did it."""
    with pytest.raises(SpecError) as caught:
        load_suite(str(suite_with(tmp_path, old, new)))
    assert caught.value.path.endswith("task.yaml")
    assert caught.value.field == field
    assert reason in caught.value.reason


def test_volatile_columns_are_checked(tmp_path: Path) -> None:
    """Fails if `damage.volatile` were not looked up in the schema."""
    path = suite_with(tmp_path, "  allowed:\n", "  volatile: {account: [updated]}\n  allowed:\n")
    with pytest.raises(SpecError) as caught:
        load_suite(str(path))
    assert caught.value.field == "damage.volatile.account"
    assert "no column updated" in caught.value.reason


def test_a_suite_with_no_task_is_an_error(tmp_path: Path) -> None:
    """Fails if an empty directory loaded as a suite of zero tasks (an audit of nothing)."""
    (tmp_path / "notes.txt").write_text("no tasks here")
    with pytest.raises(SuiteError, match="holds no task"):
        load_suite(str(tmp_path))


def test_the_fixture_suite_and_its_variant_still_load() -> None:
    """Fails if the check rejected a correct task or its distractor variant."""
    suite = load_suite(str(FIXTURE.parent)).with_variants()
    assert sorted(suite.tasks) == ["demo/close-account", "demo/close-account~distractors"]


@pytest.mark.agentrelbench
def test_a_published_task_with_a_misspelt_where_column_fails_to_load(tmp_path: Path) -> None:
    """Fails if the `agentrelbench:` loader skipped the schema check (then the oracle's
    own reopen of the incident would be scored as damage on every run)."""
    root = suite_root()
    (tmp_path / "data").symlink_to(root / "data")
    task = tmp_path / "tasks" / "itsm" / "change-request-cab-gate"
    shutil.copytree(root / "tasks" / "itsm" / "change-request-cab-gate", task)
    damage = task / "damage.json"
    damage.write_text(damage.read_text().replace('"incident_id"', '"incidentid"', 1))
    with pytest.raises(SpecError) as caught:
        load_suite(f"agentrelbench:{tmp_path / 'tasks'}")
    assert caught.value.path == str(task)
    assert caught.value.field == "damage.allowed[0].where"
    assert "no column incidentid in table incident" in caught.value.reason


@pytest.mark.parametrize(
    ("extra", "field", "reason"),
    [
        (
            "identity: {role: agent, scope: {orgg: ORG_A}}",
            "identity.scope.orgg",
            "no table in the world has a column orgg",
        ),
        (
            "identity: {role: agent, tables: {account: [read, update], acount: [read]}}",
            "identity.tables.acount",
            "no table acount in the world",
        ),
        (
            "faults: [{kind: ack_lost_after_commit, tools: [update_acount]}]",
            "faults[0].tools",
            "no tool update_acount among the task's tools",
        ),
    ],
)
def test_an_identity_or_fault_naming_what_the_world_lacks_fails_to_load(
    tmp_path: Path, extra: str, field: str, reason: str
) -> None:
    """Fails if a misspelt scope column loads (it pins no table: the scope is silently
    off, 6/20 damage where the right spelling gives 0/20), if a granted table that does
    not exist loads, or if a fault rule on a tool the task lacks loads (it never fires)."""
    (tmp_path / "task.yaml").write_text(FIXTURE.read_text() + extra + "\n")
    with pytest.raises(SpecError) as caught:
        load_suite(str(tmp_path))
    assert caught.value.path.endswith("task.yaml")
    assert (caught.value.field, caught.value.reason) == (field, reason)


def test_a_correct_identity_and_fault_rule_still_load(tmp_path: Path) -> None:
    """Fails if the identity check rejected a scope column, a grant or a fault tool the
    world and the task do have."""
    extra = (
        "identity: {role: agent, scope: {org: ORG_A}, tables: {account: [read, update]}}\n"
        "faults: [{kind: ack_lost_after_commit, tools: [update_account]}]\n"
    )
    (tmp_path / "task.yaml").write_text(FIXTURE.read_text() + extra)
    assert list(load_suite(str(tmp_path)).tasks) == ["demo/close-account"]
