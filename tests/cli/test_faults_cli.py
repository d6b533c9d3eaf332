"""`kaudit run --faults/--identity` and what `report` and `stats` say about them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger

TASKS = "billing/payout-ack-lost,itsm/other-org-incident-close,csm/interaction-cleanup"


def run(ledger: Path, *extra: str) -> None:
    args = ["run", "--agent", "reference", "--k", "4", "--tasks", TASKS, "--ledger", str(ledger)]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output


def test_report_counts_every_injected_fault_by_kind(tmp_path: Path) -> None:
    """Fails if the report's fault counts drift from the faults recorded on the runs."""
    ledger = tmp_path / "l.sqlite"
    run(ledger, "--faults", "ack_lost_after_commit")
    with Ledger(ledger) as store:
        records = list(store.records())
    injected = sum(f.kind == "ack_lost_after_commit" for r in records for f in r.faults)
    hit = [r for r in records if any(f.kind == "ack_lost_after_commit" for f in r.faults)]
    out = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    report = json.loads(out.output)
    assert injected > 0
    assert report["faults"]["ack_lost_after_commit"] == injected
    mix = report["fault_outcomes"]["ack_lost_after_commit"]
    assert sum(mix.values()) == len(hit)
    assert mix.get("FAIL_DAMAGE", 0) == sum(r.outcome == "FAIL_DAMAGE" for r in hit)
    cells = {c["task"]: c for c in report["cells"]}
    attempts = sum(len(r.boundary_attempts) for r in records)
    assert cells["itsm/other-org-incident-close"]["boundary_attempts"] == attempts
    assert report["boundary_attempts"] == attempts
    stats = json.loads(CliRunner().invoke(app, ["stats", str(ledger), "--json"]).output)
    assert stats["exposure"]["faults"] == report["faults"]


def test_a_resumed_campaign_keeps_its_faults(tmp_path: Path) -> None:
    """Fails if a campaign started with faults can resume under other faults."""
    ledger = tmp_path / "l.sqlite"
    run(ledger, "--faults", "ack_lost_after_commit:0.5")
    args = ["run", "--agent", "reference", "--k", "4", "--tasks", TASKS, "--ledger", str(ledger)]
    result = CliRunner().invoke(app, [*args, "--faults", "duplicate_delivery"])
    assert result.exit_code == 2 and "faults" in result.output


@pytest.mark.parametrize(
    ("first", "then"),
    [((), ("--faults", "ack_lost_after_commit")), (("--faults", "ack_lost_after_commit"), ())],
)
def test_a_resume_can_neither_add_nor_drop_campaign_faults(
    tmp_path: Path, first: tuple[str, ...], then: tuple[str, ...]
) -> None:
    """Fails if faulted and unfaulted runs can be pooled in one campaign's cells by adding
    or dropping `--faults` on resume (only a changed fault set used to be refused)."""
    ledger = tmp_path / "l.sqlite"
    run(ledger, *first)
    args = ["run", "--agent", "reference", "--k", "5", "--tasks", TASKS, "--ledger", str(ledger)]
    result = CliRunner().invoke(app, [*args, *then])
    assert result.exit_code == 2 and "faults" in result.output, result.output


def test_campaign_faults_make_another_cell_than_the_bare_task(tmp_path: Path) -> None:
    """Fails if runs under campaign faults carry the bare task's digest (report, stats and
    the gate would then pool them with unfaulted runs of the same task)."""
    plain, faulted = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    run(plain)
    run(faulted, "--faults", "ack_lost_after_commit")
    with Ledger(plain) as a, Ledger(faulted) as b:
        bare = {r.task: r.task_digest for r in a.records()}
        other = {r.task: r.task_digest for r in b.records()}
    assert set(bare) == set(other) and all(bare[t] != other[t] for t in bare)


def test_fault_draws_are_the_same_when_rerun(tmp_path: Path) -> None:
    """Fails if fault injection is not reproducible from the campaign seed."""
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    for ledger in (first, second):
        run(ledger, "--faults", "ack_lost_after_commit:0.5,duplicate_delivery:0.3")
    with Ledger(first) as a, Ledger(second) as b:
        assert [r.faults for r in a.records()] == [r.faults for r in b.records()]


def test_bad_faults_and_identity_files_exit_2_in_one_line(tmp_path: Path) -> None:
    """Fails if bad input raises a traceback or exits with another code."""
    ledger = str(tmp_path / "l.sqlite")
    bad = CliRunner().invoke(app, ["run", "--ledger", ledger, "--faults", "lost"])
    assert bad.exit_code == 2 and "unknown fault 'lost'" in bad.output
    identity = tmp_path / "id.yaml"
    identity.write_text("role: x\ntables: {payouts: [drop]}\n")
    bad = CliRunner().invoke(app, ["run", "--ledger", ledger, "--identity", str(identity)])
    assert bad.exit_code == 2 and "id.yaml: tables.payouts[0]: Input should be" in bad.output
    assert "Traceback" not in bad.output


def test_tasks_list_shows_each_tasks_faults_and_identity() -> None:
    """Fails if `tasks list --json` hides which tasks inject faults or run under an identity."""
    listed = json.loads(CliRunner().invoke(app, ["tasks", "list", "--json"]).output)
    by_id = {task["id"]: task for task in listed}
    assert by_id["billing/payout-ack-lost"]["faults"] == [
        {"kind": "ack_lost_after_commit", "rate": 1.0, "tools": ["issue_payout"], "limit": 1}
    ]
    assert by_id["billing/void-invoice-purge"]["identity"] == "billing-clerk"
    assert sum(bool(t["faults"]) for t in listed) == 4
    assert sum(t["identity"] is not None for t in listed) == 7
