"""The monitor compares events with the audited task version they ran, never with none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger
from kaudit.monitor import Event, Monitor
from kaudit.monitor._audit import read_audit
from kaudit.monitor._events import event_from_json
from tests.records import labeled_run

OLD, NEW = "a" * 64, "b" * 64


def audit_ledger(path: Path) -> Path:
    """6/60 damage in each of two versions of task t: the ledger names them t@digest8."""
    with Ledger(path) as ledger:
        for campaign, digest in (("v1", OLD), ("v2", NEW)):
            ledger.open_campaign(campaign, {"seed": 0})
            for i in range(60):
                ledger.append(labeled_run(i, damage=i < 6, campaign=campaign, task_digest=digest))
    return path


def drifted(n: int = 200, version: str | None = None) -> list[Event]:
    return [Event("t", "m", i % 2 == 0, time=i, version=version) for i in range(n)]


def test_two_audited_versions_still_give_a_mirage_and_an_alarm(tmp_path: Path) -> None:
    """The replay: events name the task id, the audit has it in two versions.

    Fails if the monitor looks the audit up by display name (``t@aaaaaaaa``): it then
    finds no cell and says `unsupported` with no alarm, as today's code does.
    """
    audit = read_audit(audit_ledger(tmp_path / "a.sqlite"))
    report = Monitor(audit, threshold=0.2).observe_all(drifted())
    [cell] = report.cells
    assert (cell.status, report.alarm) == ("mirage", True)
    assert cell.audit is not None and cell.audit.digest == NEW  # the newest version
    assert cell.to_json()["audit"]["cell"] == "t@bbbbbbbb"


def test_an_event_naming_its_version_is_matched_to_it(tmp_path: Path) -> None:
    """Fails if `version` is ignored (the newest is used) or an unknown one is matched."""
    audit = read_audit(audit_ledger(tmp_path / "a.sqlite"))
    monitor = Monitor(audit, threshold=0.2)
    older = monitor.observe(Event("t", "m", False, version=OLD[:8]))
    assert older.audit is not None and older.audit.digest == OLD
    unknown = monitor.observe(Event("t", "m", False, version="c" * 8))
    assert unknown.audit is None and unknown.status == "unsupported"
    assert len(monitor.report().cells) == 2


def test_the_cli_exits_4_on_the_versioned_replay(tmp_path: Path) -> None:
    """Fails if `kaudit monitor` exits 0 (no alarm) when the audit holds two versions."""
    ledger = audit_ledger(tmp_path / "a.sqlite")
    events = tmp_path / "e.jsonl"
    events.write_text("".join(json.dumps(e.to_json()) + "\n" for e in drifted()))
    args = ["monitor", "--audit", str(ledger), "--events", str(events), "--threshold", "0.2"]
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 4, out.output
    assert json.loads(out.output)["tasks"][0]["status"] == "mirage"


@pytest.mark.parametrize("bad", ["abc", "ABCDEF12", "zzzzzzzz", 12345678])
def test_a_version_must_be_a_digest_prefix(bad: object) -> None:
    """Fails if a version that cannot name one task digest is accepted silently."""
    with pytest.raises(ValueError, match="version"):
        event_from_json({"task": "t", "model": "m", "harm": False, "version": bad})
