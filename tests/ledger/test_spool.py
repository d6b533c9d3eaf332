"""Every writer drains the served-run spool, and every reader says what waits in it.

A served run spooled because a long `kaudit run` held its ledger must not wait for the
next `kaudit mcp serve`, which may never come: the campaign appends it before it lets go
of the lock, `kaudit ledger drain` appends it on request, and until then every reader
says that a finished run is not in its figures yet.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents import ReferenceAgent
from kaudit.cli.main import app
from kaudit.harness import CampaignPlan, RunResult, run_campaign
from kaudit.ledger import Ledger, verify_ledger
from kaudit.ledger._spool import RunSpooled, drain_ledger, pending_spool, spool_dir
from kaudit.serve import ServeOptions
from kaudit.serve._serve import append_served
from kaudit.suites import load_suite
from tests.serve.test_mcp_serve import TASK, finished_run


def _spooled_while_held(ledger: Path, result: RunResult | None = None) -> None:
    """Finish a served run while `ledger` is held by someone else: it is spooled."""
    suite = load_suite("builtin")
    result = result or asyncio.run(finished_run(suite))
    with pytest.raises(RunSpooled):
        append_served(ledger, suite, result, ServeOptions(), 0.05)


def test_a_campaign_appends_a_run_served_while_it_held_the_ledger(tmp_path: Path) -> None:
    """Fails if `kaudit run` lets go of the ledger with a served run still spooled (it
    would wait for a next `mcp serve` that may never come), or appends it twice."""
    ledger = tmp_path / "audit.sqlite"
    suite = load_suite("builtin")
    tasks = [suite.tasks[TASK]]
    served = asyncio.run(finished_run(suite))
    spooled: list[int] = []

    def serve_once(_record: object) -> None:
        if not spooled:  # the campaign holds the lock while it records its runs
            spooled.append(1)
            _spooled_while_held(ledger, served)
            assert pending_spool(ledger) == 1

    with Ledger(ledger) as store:
        result = asyncio.run(
            run_campaign(
                CampaignPlan("c", k=2, seed=1), suite, [ReferenceAgent()], store,
                tasks=tasks, on_result=serve_once,
            )
        )  # fmt: skip
    assert (result.ran, result.served_appended, result.served_kept) == (2, 1, ())
    assert pending_spool(ledger) == 0
    with Ledger(ledger, readonly=True) as store:
        appended = [r for r in store.records() if r.campaign == "mcp"]
    assert [(r.model, r.run_index) for r in appended] == [("mcp:probe", 0)]
    assert verify_ledger(ledger).records == 3


def test_every_reader_notes_a_waiting_run_and_drain_appends_it(tmp_path: Path) -> None:
    """Fails if a reader prints its figures without saying that a finished served run is
    waiting outside them, or if `kaudit ledger drain` does not append it (once)."""
    ledger = tmp_path / "audit.sqlite"
    runner = CliRunner()
    made = runner.invoke(
        app, ["run", "--suite", "builtin", "--agent", "reference", "--k", "1",
              "--tasks", TASK, "--ledger", str(ledger), "--no-preflight"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    with Ledger(ledger) as store, store.writer_lock():
        _spooled_while_held(ledger)
    readers = {
        "report": ["report", str(ledger)],
        "report --json": ["report", str(ledger), "--json"],
        "stats": ["stats", str(ledger)],
        "gate": ["gate", str(ledger), "--authority", "propose", "--json"],
        "export": ["export", str(ledger), "--to", "jsonl", "--out", str(tmp_path / "e.jsonl")],
        "ledger export": ["ledger", "export", str(ledger)],
        "ledger verify": ["ledger", "verify", str(ledger)],
    }
    for name, args in readers.items():
        seen = runner.invoke(app, args)
        assert seen.exit_code in (0, 3), (name, seen.output)
        note = " ".join(seen.stderr.split())
        assert f"1 served run waits in {spool_dir(ledger)}/" in note, (name, seen.stderr)
    before = json.loads(runner.invoke(app, ["report", str(ledger), "--json"]).stdout)
    drained = runner.invoke(app, ["ledger", "drain", str(ledger)])
    assert drained.exit_code == 0, drained.output
    assert "1 served run appended" in drained.stdout
    assert runner.invoke(app, ["ledger", "drain", str(ledger)]).stdout.startswith("0 served runs")
    after = runner.invoke(app, ["report", str(ledger), "--json"])
    assert "waits in" not in after.stderr
    assert json.loads(after.stdout) != before  # the served run now counts
    assert verify_ledger(ledger).records == 2


def test_an_entry_the_ledger_refuses_stays_in_the_spool_and_is_named(tmp_path: Path) -> None:
    """Fails if a drain deletes an entry it could not append (the run would be lost), or
    reports success for it."""
    ledger = tmp_path / "audit.sqlite"
    with Ledger(ledger) as store, store.writer_lock():
        _spooled_while_held(ledger)
    [entry] = spool_dir(ledger).glob("*.json")
    entry.write_text("{not json")
    assert drain_ledger(ledger).kept[0].endswith(f"the run is kept in {entry}")
    seen = CliRunner().invoke(app, ["ledger", "drain", str(ledger)])
    assert seen.exit_code == 2 and "unreadable spooled run" in seen.stderr, seen.output
    assert entry.is_file()


def test_entries_dropped_into_the_spool_are_reported_and_never_appended(
    tmp_path: Path,
) -> None:
    """Fails if write access to the spool directory adds runs to a campaign: twenty copies
    of a clean served run, one entry without a claim, one whose claim the ledger never
    issued, and a stray file, dropped in before `kaudit run` (tried by hand without the
    claim check: the next run appended all twenty-one copies to the cell)."""
    from kaudit.ledger._spool import spool_run

    ledger = tmp_path / "audit.sqlite"
    suite = load_suite("builtin")
    result = asyncio.run(finished_run(suite))
    served = append_served(ledger, suite, result, ServeOptions())
    claim = served.extra["served"]["claim"]
    for _ in range(20):  # copies of the clean run, its (used) claim and all
        spool_run(ledger, result.record, result.final_image, {}, claim)
    spool_run(ledger, result.record, result.final_image, {})
    spool_run(ledger, result.record, result.final_image, {}, "f" * 32)
    (spool_dir(ledger) / "notes.txt").write_text("hello")
    before = sorted(path.name for path in spool_dir(ledger).iterdir())
    made = CliRunner().invoke(
        app, ["run", "--suite", "builtin", "--agent", "reference", "--k", "1",
              "--tasks", TASK, "--ledger", str(ledger), "--no-preflight"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    warned = " ".join(made.stderr.split()) + " ".join(made.stdout.split())
    assert warned.count("its claim is already used by run 0") == 20, made.output
    assert "names no claim" in warned and "names no such claim" in warned, made.output
    assert "notes.txt: not a spooled run; left alone" in warned, made.output
    assert sorted(path.name for path in spool_dir(ledger).iterdir()) == before
    with Ledger(ledger, readonly=True) as store:
        mcp = [r for r in store.records() if r.campaign == "mcp"]
    assert [r.run_index for r in mcp] == [0]


def test_a_claim_admits_only_its_own_campaign_and_task(tmp_path: Path) -> None:
    """Fails if a spooled run is appended under a claim issued for another task or
    campaign (a served run's claim reused to feed a different cell)."""
    from kaudit.ledger._spool import spool_run

    ledger = tmp_path / "audit.sqlite"
    suite = load_suite("builtin")
    result = asyncio.run(finished_run(suite))
    with Ledger(ledger) as store:
        other = store.issue_claim("mcp", "some/other-task")
        elsewhere = store.issue_claim("another-campaign", result.record.task)
    for claim in (other, elsewhere):
        spool_run(ledger, result.record, result.final_image, {}, claim)
    drained = drain_ledger(ledger)
    assert drained.appended == {}
    assert len(drained.kept) == 2 and all("names a claim for" in k for k in drained.kept)
    assert pending_spool(ledger) == 2
