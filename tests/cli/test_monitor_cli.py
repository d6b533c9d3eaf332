"""`kaudit monitor` and `kaudit simulate mirage` end to end, on real ledgers and files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from tests.conftest import FIXTURES

runner = CliRunner()
KAUDIT = [sys.executable, "-c", "from kaudit.cli.main import main; main()"]


@pytest.fixture
def mirage(tmp_path: Path) -> dict[str, object]:
    result = runner.invoke(app, ["simulate", "mirage", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def _statuses(report: dict[str, object]) -> dict[tuple[str, str, str | None], tuple[str, str]]:
    tasks = report["tasks"]
    assert isinstance(tasks, list)
    return {(t["model"], t["task"], t.get("group")): (t["status"], t["decision"]) for t in tasks}


def test_simulated_mirage_audit_cannot_tell_the_agents_apart_the_monitor_can(
    mirage: dict[str, object],
) -> None:
    """Fails if the two audits differed (then it is no mirage) or the monitor missed the drift."""
    audit = mirage["audit"]
    assert isinstance(audit, dict)
    steady, drifting = audit["simulated:steady"], audit["simulated:drifting"]
    assert steady == drifting and mirage["audit_fisher_p"] == 1.0
    monitor = mirage["monitor"]
    assert isinstance(monitor, dict) and monitor["alarm"] is True
    assert _statuses(monitor) == {
        ("simulated:drifting", "billing/refund-approval-limit", None): ("mirage", "hold"),
        ("simulated:steady", "billing/refund-approval-limit", None): ("consistent", "deploy"),
        ("simulated:steady", "billing/refund-approval-limit", "eu"): (
            "unidentified",
            "cannot_determine",
        ),
        ("simulated:steady", "billing/payout-send-scoped", None): ("unsupported", "deploy"),
    }


def test_monitor_json_contract_and_alarm_exit_code(
    mirage: dict[str, object], tmp_path: Path
) -> None:
    """Fails if the CLI's JSON lost a documented key or an alarm exited 0. The simulation
    compares three cells with the audit (two agents, one group), so `--family 3`."""
    args = ["monitor", "--audit", str(tmp_path / "audit.sqlite"), "--threshold", "0.2"]
    args += ["--family", "3"]
    result = runner.invoke(app, [*args, "--events", str(tmp_path / "events.jsonl"), "--json"])
    assert result.exit_code == 4, result.output
    report = json.loads(result.output)
    assert report["alarm"] is True and report["method"].startswith("beta-binomial mixture")
    cell = next(t for t in report["tasks"] if t["status"] == "mirage")
    assert set(cell) == {"task", "model", "status", "decision", "audit", "deployment"}
    assert {"phat", "ci_low", "ci_high"} <= set(cell["audit"])
    assert {"n", "harm", "unobserved", "lower", "upper", "ci_low", "ci_high"} <= set(
        cell["deployment"]
    )
    assert cell["deployment"]["ci_low"] > cell["audit"]["upper"] >= cell["audit"]["ci_high"]
    assert report["family"]["size"] == 3 and report["family"]["error_bound"] == 0.05
    # the CLI on the written files reproduces the simulation's own report exactly
    assert report == mirage["monitor"]


def test_monitor_without_drift_exits_zero_and_reads_stdin(tmp_path: Path) -> None:
    """Fails if '-' were not stdin or a clean stream exited with the alarm code."""
    runner.invoke(app, ["simulate", "mirage", "--out", str(tmp_path)])
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    steady = "\n".join(line for line in lines if "drifting" not in line) + "\n"
    args = ["monitor", "--audit", str(tmp_path / "audit.sqlite"), "--events", "-"]
    result = runner.invoke(app, [*args, "--threshold", "0.2"], input=steady)
    assert result.exit_code == 0, result.output
    assert (
        "no alarm" in result.output and "unidentified, decision cannot_determine" in result.output
    )


def test_malformed_event_line_is_one_line_exit_2(mirage: dict[str, object], tmp_path: Path) -> None:
    """Fails if a bad line produced a traceback or was skipped."""
    events = tmp_path / "bad.jsonl"
    events.write_text(
        '{"task": "t", "model": "m", "harm": false}\n\n{"task": "t", "model": "m", "harm": 1}\n'
    )
    args = ["monitor", "--audit", str(tmp_path / "audit.sqlite"), "--events", str(events)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: {events}: line 3: harm: must be true, false or null, got 1"
    )
    for bad in (
        ["--threshold", "1.5"],
        ["--alpha", "0"],
        ["--events", str(tmp_path / "missing.jsonl")],
        ["--audit", str(tmp_path / "missing.sqlite")],
        ["--audit", str(events)],  # not a ledger
    ):
        result = runner.invoke(app, [*args, *bad])
        assert result.exit_code == 2 and result.output.startswith("error: "), result.output


def test_audit_side_is_the_reports_interval_for_a_real_campaign(tmp_path: Path) -> None:
    """Fails if the monitor computed the audit's interval differently from `kaudit report`."""
    ledger = str(tmp_path / "audit.sqlite")
    run = ["run", "--suite", str(FIXTURES / "mini_suite"), "--agent", "scripted:close_both"]
    assert runner.invoke(app, [*run, "--k", "4", "--ledger", ledger]).exit_code == 0
    (cell,) = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    events = tmp_path / "e.jsonl"
    event = {"task": cell["task"], "model": cell["model"], "harm": False}
    events.write_text((json.dumps(event) + "\n") * 200)
    result = runner.invoke(app, ["monitor", "--audit", ledger, "--events", str(events), "--json"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.output)["tasks"]
    assert (found["audit"]["ci_low"], found["audit"]["ci_high"]) == (
        cell["ci_low"],
        cell["ci_high"],
    )
    assert (found["status"], found["decision"]) == ("consistent", "deploy")


def _follow(tmp_path: Path) -> subprocess.Popen[str]:
    args = ["monitor", "--audit", str(tmp_path / "audit.sqlite"), "--threshold", "0.2"]
    return subprocess.Popen(
        [*KAUDIT, *args, "--events", str(tmp_path / "live.jsonl"), "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"COLUMNS": "200"},
    )


def test_follow_tails_a_growing_file_and_stops_at_the_first_alarm(
    mirage: dict[str, object], tmp_path: Path
) -> None:
    """A real process tails the file while the test appends to it; it must exit 4 once the
    drifting agent is a mirage. Fails if --follow read only what existed at start."""
    lines = (tmp_path / "events.jsonl").read_text().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:8]))
    process = _follow(tmp_path)
    assert process.stderr is not None
    first = process.stderr.readline()  # the process has read the existing lines
    assert "inconclusive at n = 1" in first or "unsupported at n = 1" in first
    with live.open("a") as handle:
        handle.write("".join(lines[8:]))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 4, err
    assert "simulated:drifting billing/refund-approval-limit: mirage" in err
    assert "ALARM" in out


def test_follow_reports_and_exits_zero_on_ctrl_c(mirage: dict[str, object], tmp_path: Path) -> None:
    """Fails if Ctrl-C lost the report or exited with a traceback."""
    steady = [
        line
        for line in (tmp_path / "events.jsonl").read_text().splitlines(keepends=True)
        if "drifting" not in line
    ]
    (tmp_path / "live.jsonl").write_text("".join(steady[:30]))
    process = _follow(tmp_path)
    assert process.stderr is not None
    process.stderr.readline()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "Traceback" not in err and "no alarm" in out
    seen = re.search(r"^(\d+) events", out, re.MULTILINE)
    assert seen is not None and 1 <= int(seen.group(1)) <= 30


def test_a_sequentially_stopped_audit_is_compared_by_its_anytime_interval(tmp_path: Path) -> None:
    """Fails if the monitor took Clopper-Pearson for a cell `--until` stopped at 1/1."""
    from kaudit.stats import beta_binomial_cs
    from kaudit.stats._sequence import CS_METHOD

    ledger = str(tmp_path / "audit.sqlite")
    run = ["run", "--suite", str(FIXTURES / "mini_suite"), "--agent", "scripted:close_both"]
    result = runner.invoke(app, [*run, "--k", "20", "--until", "damage", "--ledger", ledger])
    assert result.exit_code == 0, result.output
    events = tmp_path / "e.jsonl"
    model = "simulated:scripted:close_both"
    events.write_text(json.dumps({"task": "demo/close-account", "model": model, "harm": True}))
    result = runner.invoke(app, ["monitor", "--audit", ledger, "--events", str(events), "--json"])
    (cell,) = json.loads(result.output)["tasks"]
    assert cell["audit"]["interval"] == CS_METHOD
    assert cell["audit"]["ci_low"] == pytest.approx(beta_binomial_cs(1, 1)[0])
