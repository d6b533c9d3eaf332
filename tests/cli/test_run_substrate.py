"""`kaudit run --substrate postgresql://...`: the documented command, verdicts equal to SQLite's."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents import ReferenceAgent
from kaudit.cli.main import app
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.ledger import Ledger
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.suites import load_suite
from tests.pg import databases, holder, server_url, wait_orphaned

pytestmark = pytest.mark.postgres
runner = CliRunner()
TASKS = (
    "billing/invoice-line-dedupe,billing/payout-send-scoped,csm/installed-product-delete,"
    "itsm/incident-delete-duplicate,itsm/problem-merge-order"
)
"""Tasks with composite keys, cascading deletes, money and irreversible sends."""


def _verdicts(ledger: Path) -> dict[tuple[str, int], tuple[object, ...]]:
    with Ledger(ledger) as store:
        return {
            (r.task, r.run_index): (
                r.status,
                r.outcome,
                r.sub_label,
                r.dollars,
                r.verdict,
                r.initial_digest,
                r.final_digest,
            )
            for r in store.records("default")
        }


def test_the_same_seeded_campaign_gives_the_same_verdicts_on_both(tmp_path: Path) -> None:
    """Bug caught: a substrate that changes what the labeler sees (values, cascades, keys),
    or the state digest: the PostgreSQL dump carries no change log, which the digest once
    took for a schema change, so no PostgreSQL run ever kept `final_digest ==
    initial_digest` and a damaging run's digest differed from SQLite's (tried: both)."""
    url = server_url()
    command = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3", "--seed", "11"]
    ledgers = {}
    for substrate in ("sqlite", url, url + "?reset=rollback"):
        ledgers[substrate] = tmp_path / f"{len(ledgers)}.sqlite"
        args = [*command, "--tasks", TASKS, "--substrate", substrate]
        result = runner.invoke(app, [*args, "--ledger", str(ledgers[substrate])])
        assert result.exit_code == 0, result.output
        assert "15 runs recorded (0 already in the ledger, 0 restarted, 0 invalid" in result.output
    on_sqlite, on_postgres = _verdicts(ledgers["sqlite"]), _verdicts(ledgers[url])
    assert len(on_sqlite) == 15
    assert on_postgres == on_sqlite
    assert _verdicts(ledgers[url + "?reset=rollback"]) == on_sqlite
    assert {v[1] for v in on_sqlite.values()} >= {"PASS", "FAIL_DAMAGE"}
    untouched = [v for v in on_sqlite.values() if v[5] == v[6]]
    assert len(untouched) == 2 and {v[2] for v in untouched} == {"refused_clean"}


def test_a_resumed_campaign_drops_what_a_killed_process_left_and_spares_a_live_one(
    tmp_path: Path,
) -> None:
    """Bug caught: resume never reclaims (a killed campaign's databases pile up forever), or
    reclaims by campaign name alone and drops a live process's run of the same name."""
    url = server_url()
    suite = load_suite("builtin").on_substrate(url)
    task = suite.tasks["itsm/incident-delete-duplicate"]
    pg = suite.substrate(task)
    assert isinstance(pg, PostgresSubstrate)
    # A run the resumed invocation does not repeat (another task), so only reclaim drops it.
    run = f"kaudit_i14_resume/{ReferenceAgent().name}/billing/payout-send-scoped/0"
    with holder(url, run) as (_, live), holder(url, run) as (victim, dead):
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        assert wait_orphaned(pg, "kaudit_i14_resume", dead).orphaned
        plan = CampaignPlan(name="kaudit_i14_resume", k=1, seed=3)
        with Ledger(tmp_path / "l.sqlite") as ledger:
            result = asyncio.run(
                run_campaign(plan, suite, [ReferenceAgent()], ledger, tasks=[task])
            )
        assert result.ran == 1 and result.invalid == 0
        names = databases("kaudit_r_")
        assert dead not in names and live in names
    wait_orphaned(pg, "kaudit_i14_resume", live)
    assert pg.reclaim("kaudit_i14_resume") == 1


def _kaudit(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kaudit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_two_processes_running_the_same_campaign_on_one_server_do_not_disturb_each_other(
    tmp_path: Path,
) -> None:
    """Bug caught: run databases named by run id alone (one process's clone drops the
    other's live database mid-run) or reclaimed by campaign name (one's start drops the
    other's): runs end INVALID, or with verdicts of a half-dropped world."""
    url = server_url()
    command = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3", "--seed", "11"]
    args = [*command, "--tasks", TASKS, "--substrate", url, "--concurrency", "4"]
    ledgers = [tmp_path / "a.sqlite", tmp_path / "b.sqlite"]
    children = [_kaudit(*args, "--ledger", str(ledger)) for ledger in ledgers]
    outputs = [child.communicate(timeout=600)[0] for child in children]
    for child, output in zip(children, outputs, strict=True):
        assert child.returncode == 0, output
        assert "15 runs recorded (0 already in the ledger, 0 restarted, 0 invalid" in output
    first, second = (_verdicts(ledger) for ledger in ledgers)
    assert len(first) == 15 and first == second


def test_the_manifest_records_each_invocations_reset_and_a_resume_may_switch_it(
    tmp_path: Path,
) -> None:
    """Bug caught: the manifest does not say which reset mode made a campaign's runs (or
    forgets the first invocation's when a resume switches), or a resume that only changes
    the reset mode (verdicts proven equal) is refused as another campaign."""
    url = server_url()
    ledger = tmp_path / "l.sqlite"
    base = ["run", "--suite", "builtin", "--agent", "reference", "--seed", "11"]
    base += ["--tasks", "itsm/incident-delete-duplicate", "--ledger", str(ledger)]
    for k, substrate in (("1", url), ("2", url + "?reset=rollback")):
        result = runner.invoke(app, [*base, "--k", k, "--substrate", substrate])
        assert result.exit_code == 0, result.output
        assert f"1 run recorded ({int(k) - 1} already in the ledger" in result.output
    with Ledger(ledger) as store:
        manifest = store.manifest("default")
        statuses = [r.status for r in store.records("default")]
    assert statuses == ["labeled", "labeled"]
    assert manifest is not None
    world = "enterprise"
    resets = [entry["substrate"][world]["reset"] for entry in manifest["invocations"]]
    assert resets == ["clone", "rollback"]
    assert manifest["substrate"][world]["reset"] == "rollback"
    assert manifest["substrate"][world]["server"] == url


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Bug caught: every run recorded INVALID (or a traceback) instead of one clear error."""
    args = ["run", "--suite", "builtin", "--k", "1", "--tasks", "billing/payout-send-scoped"]
    bad = "postgresql://nobody@127.0.0.1:1/none"
    result = runner.invoke(app, [*args, "--substrate", bad, "--ledger", str(tmp_path / "l")])
    assert result.exit_code == 2
    assert "cannot connect to PostgreSQL at postgresql://nobody@127.0.0.1:1/none" in result.output
    assert "Traceback" not in result.output


def test_an_unknown_substrate_lists_the_known_ones(tmp_path: Path) -> None:
    """Bug caught: a typo in --substrate silently runs on SQLite."""
    args = ["validate", "--suite", "builtin", "--tasks", "billing/payout-send-scoped"]
    result = runner.invoke(app, [*args, "--substrate", "mysql://x"])
    assert result.exit_code == 2
    assert "unknown substrate 'mysql'; known: ['postgresql', 'sqlite']" in result.output
