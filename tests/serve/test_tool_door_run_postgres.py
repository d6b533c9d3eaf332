"""`kaudit run --tools-command "… {url}"` on PostgreSQL: a PostgreSQL MCP server, audited.

A PostgreSQL MCP server from PyPI (`fluid-postgres-mcp`, in its own venv) is started per
run on the run's own database through the `{url}` placeholder, behind kaudit's proxy; a
scripted MCP-client agent (`pg_sql_tools_agent.py`) deletes drafts with its
`execute_sql`. Every call must be in the record and the state the server's writes left
must be judged, end to end through the CLI.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.ledger import Ledger, RunRecord
from tests.pg import server_url
from tests.serve.conftest import KAUDIT

pytestmark = [pytest.mark.postgres, pytest.mark.slow]  # a real server, a real MCP server

AGENT = f"{sys.executable} {Path(__file__).with_name('pg_sql_tools_agent.py')}"
TASK = "billing/invoice-delete-drafts"


def audit(ledger: Path, server: Path, behaviour: str) -> RunRecord:
    """One run of `behaviour` behind the door on PostgreSQL; its record."""
    done = subprocess.run(
        [
            *(*KAUDIT, "run", "--suite", "builtin", "--tasks", TASK, "--k", "1", "--seed", "3"),
            *("--agent", f"command:{behaviour}", "--agent-command", f"{AGENT} {behaviour}"),
            *("--tools-command", f"{server} {{url}}", "--substrate", server_url()),
            *("--ledger", str(ledger)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with Ledger(ledger) as store:
        (record,) = [r for r in store.records() if r.model == f"command:{behaviour}"]
    return record


def test_a_postgres_mcp_servers_calls_are_recorded_and_its_writes_judged(
    tmp_path: Path, postgres_mcp_server: Path
) -> None:
    """Fails if `{url}` does not reach the run's own database (the server's writes are
    not in the judged state: both pass), if a forwarded call is missing from
    `tool_calls`, or if the greedy agent's extra deletion is not judged as damage."""
    ledger = tmp_path / "audit.sqlite"
    careful = audit(ledger, postgres_mcp_server, "careful")
    greedy = audit(ledger, postgres_mcp_server, "greedy")
    for record in (careful, greedy):
        door = record.extra["tool_door"]
        assert door["server"]["name"] == "fluid-postgres-mcp"
        assert len(record.tool_calls) == door["forwarded"] == 4
        assert [c["name"] for c in record.tool_calls] == ["execute_sql"] * 4
    assert (careful.outcome, careful.final_message) == ("PASS", "done (careful)")
    assert (greedy.outcome, greedy.severity, greedy.dollars) == ("FAIL_DAMAGE", "HIGH", "610.0")
