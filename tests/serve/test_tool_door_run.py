"""`kaudit run --agent command --tools-command`: the reference SQLite MCP server, audited.

A scripted MCP-client agent (`sql_tools_agent.py`) does two built-in tasks with the
server's `read_query` / `write_query` only, through kaudit's proxy, on each run's own
world file; every call must be in the record, faults must break the server's writes,
and the task's step budget must hold, end to end through the CLI.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.ledger import Ledger, RunRecord
from tests.serve.conftest import KAUDIT

pytestmark = pytest.mark.slow  # each run starts a real MCP server

AGENT = f"{sys.executable} {Path(__file__).with_name('sql_tools_agent.py')}"
TASKS = "billing/invoice-delete-drafts,billing/payout-ack-lost"
READS = "read_query=read,list_tables=read,describe_table=read"


def audit(ledger: Path, server: Path, behaviour: str, *extra: str) -> dict[str, RunRecord]:
    """One run per task of `behaviour` behind the door; the records by task."""
    done = subprocess.run(
        [
            *(*KAUDIT, "run", "--suite", "builtin", "--tasks", TASKS, "--k", "1", "--seed", "3"),
            *("--agent", f"command:{behaviour}", "--agent-command", f"{AGENT} {behaviour}"),
            *("--tools-command", f"{server} --db-path {{db}}", "--tools-tag", READS),
            *("--ledger", str(ledger), *extra),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with Ledger(ledger) as store:
        return {r.task: r for r in store.records() if r.model == f"command:{behaviour}"}


def test_every_proxied_call_is_recorded_and_a_lost_ack_is_survived_or_duplicated(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if a forwarded call is missing from `tool_calls`, if a lost acknowledgement
    does not execute the write (the careful agent's read-back would not find it and it
    would write again), or if the blind agent's resent payout is not judged as damage."""
    ledger = tmp_path / "audit.sqlite"
    careful = audit(ledger, sqlite_mcp_server, "careful", "--faults", "ack_lost_after_commit")
    blind = audit(ledger, sqlite_mcp_server, "blind", "--faults", "ack_lost_after_commit")
    for record in (*careful.values(), *blind.values()):
        door = record.extra["tool_door"]
        assert len(record.tool_calls) == door["forwarded"] > 0
        assert door["server"]["name"] == "sqlite"
        assert {c["name"] for c in record.tool_calls} <= {"read_query", "write_query"}
        writes = [i for i, c in enumerate(record.tool_calls) if c["name"] == "write_query"]
        assert [(f.call, f.kind, f.committed) for f in record.faults] == [
            (i, "ack_lost_after_commit", True) for i in writes
        ]
    payout = careful["billing/payout-ack-lost"]
    assert [c["name"] for c in payout.tool_calls] == ["write_query", "read_query"] * 2
    assert (payout.outcome, payout.termination, payout.final_message) == (
        "PASS",
        "completed",
        "done (careful)",
    )
    assert careful["billing/invoice-delete-drafts"].outcome == "PASS"
    paid_twice = blind["billing/payout-ack-lost"]
    assert (paid_twice.outcome, paid_twice.severity, paid_twice.dollars) == (
        "FAIL_DAMAGE",
        "CRITICAL",
        "188.5",
    )
    greedy = blind["billing/invoice-delete-drafts"]
    assert (greedy.outcome, greedy.severity, greedy.dollars) == ("FAIL_DAMAGE", "HIGH", "610.0")


def test_an_agent_past_the_step_budget_is_cut_off_and_stalled(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if the door forwards more calls than the task's `max_steps`, records the
    refused ones, or the run ends `completed` although the agent ran out of steps."""
    records = audit(tmp_path / "audit.sqlite", sqlite_mcp_server, "spin")
    for record in records.values():
        assert len(record.tool_calls) == record.extra["tool_door"]["forwarded"] == 30
        assert record.extra["tool_door"]["refused_over_budget"] == 1
        assert (record.termination, record.outcome) == ("stalled", "FAIL_SAFE")
        assert record.agent_error is not None and "max_steps" in record.agent_error


def test_a_tool_server_that_does_not_start_stops_the_campaign_before_any_record(
    tmp_path: Path,
) -> None:
    """Fails if a broken `--tools-command` becomes INVALID (or worse, scored) runs instead
    of the preflight's exit 2 with the server's own last words, and nothing written."""
    crash = f"{sys.executable} -c 'import sys; sys.exit(\"cannot open {{db}}\")'"
    ledger = tmp_path / "audit.sqlite"
    done = subprocess.run(
        [
            *(*KAUDIT, "run", "--suite", "builtin", "--tasks", "billing/payout-ack-lost"),
            *("--agent", "command:careful", "--agent-command", f"{AGENT} careful"),
            *("--tools-command", crash, "--ledger", str(ledger)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert "did not start" in done.stderr and "cannot open /" in done.stderr
    assert not ledger.exists()
