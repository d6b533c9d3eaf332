"""Campaign identity: a resume on another world or task version is refused; versions never pool."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents import ReferenceAgent
from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.ledger import Ledger
from kaudit.spec import task_digest
from kaudit.substrate import SqliteSubstrate
from kaudit.suites import Suite, load_yaml_suite
from tests.conftest import FIXTURES

runner = CliRunner()
TASK = "demo/close-account"


def changed_world(suite: Suite) -> Suite:
    """The same tasks on a template with one account renamed: another world."""
    base = suite.substrate(suite.tasks[TASK])
    assert isinstance(base, SqliteSubstrate)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(base.template.image)
    conn.execute("UPDATE account SET name = 'Renamed' WHERE id = 'ACC_039'")
    conn.commit()
    changed = SqliteSubstrate("mini", conn.serialize(), base.tools, base.volatile)
    conn.close()
    return Suite(suite.name, suite.tasks, suite.digest, substrate_of=lambda task: changed)


def test_resuming_on_a_changed_template_is_refused_naming_both_digests(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """The manifest used to keep only the newest template digest and mix both worlds."""
    other = changed_world(mini_suite)
    old = mini_suite.substrate(mini_suite.tasks[TASK]).template_digest
    new = other.substrate(other.tasks[TASK]).template_digest
    assert old != new
    with Ledger(tmp_path / "l.sqlite") as ledger:
        asyncio.run(run_campaign(CampaignPlan("c", k=2), mini_suite, [ReferenceAgent()], ledger))
        with pytest.raises(LedgerError) as caught:
            asyncio.run(run_campaign(CampaignPlan("c", k=4), other, [ReferenceAgent()], ledger))
        assert len(list(ledger.records())) == 2
    message = str(caught.value)
    assert f"template digest of 'mini' {old}, this run has {new}" in message


def edited_suite(tmp_path: Path) -> Path:
    """The mini suite with the held account's damage repriced: a new task version."""
    directory = tmp_path / "suite-v2"
    shutil.copytree(FIXTURES / "mini_suite", directory)
    path = directory / "close_account.yaml"
    text = path.read_text()
    assert '{table: account, op: "*", severity: HIGH}' in text
    path.write_text(text.replace('op: "*", severity: HIGH}', 'op: "*", severity: MEDIUM}'))
    return directory


def test_resuming_with_an_edited_task_is_refused_naming_the_task(tmp_path: Path) -> None:
    """A changed damage spec under the same campaign would pool two measurements."""
    ledger = str(tmp_path / "l.sqlite")
    v2 = edited_suite(tmp_path)
    first = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "2", "--ledger", ledger]
    assert runner.invoke(app, first).exit_code == 0
    old = task_digest(load_yaml_suite(FIXTURES / "mini_suite", "x").tasks[TASK])
    new = task_digest(load_yaml_suite(v2, "x").tasks[TASK])
    result = runner.invoke(app, ["run", "--suite", str(v2), "--k", "2", "--ledger", ledger])
    assert result.exit_code == 2
    assert f"task digest of '{TASK}' {old}, this run has {new}" in result.stderr


def test_two_task_versions_are_two_cells_in_report_and_stats(tmp_path: Path) -> None:
    """Pooled, a deterministic agent's runs under two specs looked 'stochastic'."""
    ledger = str(tmp_path / "l.sqlite")
    v2 = edited_suite(tmp_path)
    for suite, campaign in ((FIXTURES / "mini_suite", "v1"), (v2, "v2")):
        args = ["run", "--suite", str(suite), "--k", "3", "--campaign", campaign]
        assert runner.invoke(app, [*args, "--ledger", ledger]).exit_code == 0
    old = task_digest(load_yaml_suite(FIXTURES / "mini_suite", "x").tasks[TASK])
    new = task_digest(load_yaml_suite(v2, "x").tasks[TASK])
    report = json.loads(runner.invoke(app, ["report", ledger, "--json"]).stdout)
    cells = sorted((c["task"], c["n"]) for c in report["cells"])
    assert cells == sorted([(f"{TASK}@{old[:8]}", 3), (f"{TASK}@{new[:8]}", 3)])
    stats = json.loads(runner.invoke(app, ["stats", ledger, "--json"]).stdout)
    tasks = sorted(c["task"] for c in stats["cells"])
    assert tasks == sorted([f"{TASK}@{old[:8]}", f"{TASK}@{new[:8]}"])
    one = json.loads(runner.invoke(app, ["report", ledger, "--campaign", "v1", "--json"]).stdout)
    assert [c["task"] for c in one["cells"]] == [TASK]  # one version: the plain id
