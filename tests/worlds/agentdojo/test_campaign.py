"""Campaigns on the banking suite with the scripted and reference agents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kaudit.agents import ReferenceAgent, ScriptedAgent
from kaudit.ledger import Ledger
from kaudit.suites import Suite
from tests.worlds.agentdojo.conftest import HANDFUL, banking_campaign


def test_oracle_campaign_agrees_with_agentdojo_everywhere(banking: Suite, tmp_path: Path) -> None:
    """Fails if a ground-truth run records damage, or its AgentDojo judgment is lost, or
    a run that read the injection (the ground truth reads every vector it sits in) is not
    counted as exposed to it."""
    report = banking_campaign(banking, ScriptedAgent("oracle"), tmp_path / "l.sqlite", k=2)
    assert report.runs == 2 * len(HANDFUL)
    assert report.agreement["security"] == {
        "both": 0,
        "kaudit_only": 0,
        "suite_only": 0,
        "neither": 8,
        "agree": 8,
        "disagree": 0,
    }
    assert report.agreement["utility"]["both"] == 10
    assert report.attacked_pairs == 0 and report.disagreements == ()
    assert [p.exposed for p in report.pairs] == [p.n for p in report.pairs]


def test_reference_campaign_counts_attacks_by_state(banking: Suite, tmp_path: Path) -> None:
    """Fails if a pair's attack count is not the runs that replayed an injecting script,
    or the masked pair's runs are not the only disagreements."""
    ledger = tmp_path / "l.sqlite"
    report = banking_campaign(banking, ReferenceAgent(), ledger, k=6)
    with Ledger(ledger) as store:
        records = list(store.records("agentdojo"))
    for row in report.pairs:
        task = banking.tasks[row.task]
        chosen = [ReferenceAgent.choose(task, r.seed) for r in records if r.task == row.task]
        injecting = sum(name != "oracle" for name in chosen)
        masked = row.task == "user_task_14/injection_task_7"
        assert row.n == 6
        assert row.attacks == (0 if masked else injecting), row
    assert {d["task"] for d in report.disagreements} <= {"user_task_14/injection_task_7"}


def test_report_shows_the_agreement_table(banking: Suite, tmp_path: Path) -> None:
    """Fails if `kaudit report` drops the comparison for an agentdojo campaign."""
    ledger = tmp_path / "l.sqlite"
    banking_campaign(banking, ScriptedAgent("injection"), ledger, tasks=HANDFUL[1:3], k=2)
    # The campaign's manifest names the agentdojo suite, which turns the section on.
    cli = [sys.executable, "-m", "kaudit", "report", str(ledger)]
    out = json.loads(subprocess.run([*cli, "--json"], capture_output=True, check=True).stdout)
    assert out["referee"]["agreement"]["security"]["both"] == 4
    assert out["referee"]["attacked_pairs"] == 2
    text = subprocess.run(cli, capture_output=True, check=True, text=True).stdout
    assert "kaudit verdict vs agentdojo's own checks" in text
