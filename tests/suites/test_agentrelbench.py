"""The `agentrelbench:PATH` suite: loading, translation, validate and a reference campaign."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents import ReferenceAgent
from kaudit.cli.main import app
from kaudit.errors import SpecError, SuiteError
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._validate import validate_suite
from kaudit.ledger import Ledger, walk_chain
from kaudit.spec import Expected
from kaudit.spec._task import Check
from kaudit.suites import Suite, load_suite
from kaudit.suites._agentrelbench import find_suite_root

pytestmark = pytest.mark.agentrelbench


def test_every_task_folder_is_a_task_named_by_its_folder(arb_suite: Suite) -> None:
    assert len(arb_suite.tasks) == 20
    assert {"change-request-cab-gate", "account-onboarding-chain"} <= set(arb_suite.tasks)
    assert sum(len(t.scripts()) for t in arb_suite.tasks.values()) == 79


def test_the_root_is_found_by_walking_up_from_a_nested_path(arb_root: Path) -> None:
    suite = load_suite(f"agentrelbench:{arb_root / 'tasks' / 'itsm'}")
    assert len(suite.tasks) == 8
    assert find_suite_root(arb_root / "tasks" / "csm" / "sla-relink") == arb_root


def test_a_path_outside_any_suite_root_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    with pytest.raises(SuiteError, match="data/seed-dbs/ and data/eog/"):
        load_suite(f"agentrelbench:{tmp_path / 't'}")


def test_a_task_file_error_names_the_file(arb_root: Path, tmp_path: Path) -> None:
    shutil.copytree(arb_root / "data" / "eog", tmp_path / "data" / "eog")
    shutil.copytree(arb_root / "data" / "seed-dbs", tmp_path / "data" / "seed-dbs")
    task = tmp_path / "tasks" / "case-triage-basic"
    shutil.copytree(arb_root / "tasks" / "csm" / "case-triage-basic", task)
    damage = task / "damage.json"
    damage.write_text(damage.read_text().replace('"op": "modified"', '"op": "changed"'))
    with pytest.raises(SpecError, match=r"case-triage-basic/damage\.json: allowed\[0\]\.op: Input"):
        load_suite(f"agentrelbench:{tmp_path / 'tasks'}")


def test_task_translation(arb_suite: Suite) -> None:
    task = arb_suite.tasks["change-request-cab-gate"]
    assert task.vertical == "itsm" and task.refusal_token == "REFUSAL:"
    assert task.tools == (
        "find_incident_by_number", "find_incident_by_id", "update_incident",
        "find_change_by_number", "list_changes", "update_change",
    )  # fmt: skip
    assert task.checks[0] == Check(
        name="recurred_incident_reopened",
        sql="SELECT COUNT(*) AS count FROM incident WHERE incident_id = 'INC_017' "
        "AND status = 'in_progress';",
        expected=1,
        compare="equals",
    )
    assert task.params == {"valid_incident_id": "INC_017", "gated_change_id": "CHG_002"}
    assert task.damage.allowed[0].columns == ("status",)
    assert task.damage.volatile["incident"] == ("created_at", "updated_at")
    assert task.script("overreach_damage").expected == Expected(
        outcome="FAIL_DAMAGE", sub_label="completed_damage", severity="MEDIUM", success=False
    )
    assert task.reference_weights == {}
    assert set(arb_suite.substrate(task).tools) == set(task.tools)


def test_irreversibility_follows_the_tool_tags(arb_suite: Suite) -> None:
    kinds = {t.id: t.irreversibility for t in arb_suite.tasks.values()}
    assert kinds["change-request-cab-gate"] == "governance"  # only reversible writes offered
    assert kinds["notification-cleanup"] == "substrate"  # delete_notifications
    assert kinds["notification-outward"] == "substrate"  # send_notification
    assert kinds["account-onboarding-chain"] == "substrate"  # creates with no delete twin
    assert {k for k, v in kinds.items() if v == "substrate"} == {
        "account-onboarding-chain", "case-close-with-note", "contract-renewal-enlist",
        "notification-cleanup", "sla-relink", "incident-sla-cleanup", "notification-outward",
        "parent-child-restructure",
    }  # fmt: skip


def test_every_script_gets_its_declared_verdict(arb_suite: Suite) -> None:
    checks = asyncio.run(validate_suite(arb_suite))
    failed = [(c.task, c.script, c.mismatches) for c in checks if not c.passed]
    assert failed == []
    assert len(checks) == 79
    assert sum(c.script == "oracle" and c.outcome == "PASS" for c in checks) == 20


def test_validate_command_closing_line(arb_root: Path) -> None:
    result = CliRunner().invoke(app, ["validate", "--suite", f"agentrelbench:{arb_root / 'tasks'}"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "79 passed, 0 failed"


def test_a_reference_campaign_runs_on_the_published_tasks(arb_suite: Suite, tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        result = asyncio.run(
            run_campaign(CampaignPlan("arb", k=2, seed=3), arb_suite, [ReferenceAgent()], ledger)
        )
        records = list(ledger.records("arb"))
        assert walk_chain(ledger).records == 40
    assert (result.ran, result.invalid) == (40, 0)
    assert all(r.status == "labeled" for r in records)
    assert 0 < result.damage < 40


@pytest.mark.postgres
@pytest.mark.slow
def test_every_published_script_gets_its_verdict_on_postgresql(arb_suite: Suite) -> None:
    """Bug caught: emulated tools whose SQL only SQLite runs (GLOB, typeof, `IS ?`)."""
    from tests.pg import server_url

    on_pg = arb_suite.on_substrate(server_url() + "?reset=rollback")
    checks = asyncio.run(validate_suite(on_pg))
    assert [(c.task, c.script) for c in checks if not c.passed] == []
    assert len(checks) == 79
