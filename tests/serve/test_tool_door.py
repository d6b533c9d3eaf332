"""The tool door on its own: the reference SQLite MCP server behind kaudit's MCP proxy.

Each test opens a door on a real world file (the built-in enterprise world), connects
the official MCP client to the door's endpoint as an agent would, and checks both what
the agent saw and what the door's evidence says, against the file itself.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from kaudit.agents import Episode
from kaudit.errors import KauditError, SubstrateError
from kaudit.faults._layer import CONNECTION_LOST
from kaudit.serve import DoorEvidence, HandedWorld, ToolDoor
from kaudit.serve._tooldoor import STEP_BUDGET_USED
from kaudit.spec import FaultRule, Identity
from kaudit.suites import load_suite
from tests.serve.sql_tools_agent import APPROVE as APPROVE_REFUND
from tests.serve.sql_tools_agent import PAYOUT as PAY_OUT

pytestmark = pytest.mark.slow  # each run starts a real MCP server

TASK = "billing/payout-ack-lost"
READS = {"read_query": "read", "list_tables": "read", "describe_table": "read"}
APPROVE, PAYOUT = APPROVE_REFUND.sql, PAY_OUT.sql
"""Approve RFD_025; pay it out under the next payout id (sent twice, it pays twice)."""

Agent = Callable[[Client], Awaitable[Any]]


def world(tmp_path: Path, **changes: Any) -> HandedWorld:
    """The built-in world of `TASK` as a file in a run directory, handed over."""
    suite = load_suite("builtin")
    task = suite.tasks[TASK]
    if "max_steps" in changes:
        task = task.model_copy(update={"max_steps": changes.pop("max_steps")})
    sandbox = suite.substrate(task).seed("tool-door-test")
    try:
        image = sandbox.initial.image
    finally:
        sandbox.close()
    (tmp_path / "world.sqlite").write_bytes(image)
    facts: dict[str, Any] = {
        "run_dir": tmp_path,
        "db_path": tmp_path / "world.sqlite",
        "database_url": f"sqlite:///{tmp_path / 'world.sqlite'}",
        "episode": Episode(task=task, run_id="tool-door-test", seed=7, tool_specs=()),
        "faults": (),
        "identity": None,
        "seed": 7,
    }
    return HandedWorld(**(facts | changes))


def through_door(server: Path, handed: HandedWorld, agent: Agent) -> tuple[Any, DoorEvidence]:
    """Open a door with `server`, run `agent` against its endpoint, close; both results."""

    async def main() -> tuple[Any, DoorEvidence]:
        door = ToolDoor(f"{server} --db-path {{db}}", READS)
        env = await door.open(handed)
        try:
            async with Client(env["KAUDIT_MCP_URL"]) as client:
                seen = await agent(client)
        finally:
            evidence = await door.close()
        return seen, evidence

    return asyncio.run(main())


def rows(path: Path | None, sql: str) -> list[tuple[Any, ...]]:
    assert path is not None
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def test_the_server_tools_are_offered_tagged_and_every_call_recorded(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if the listing is not the server's (plus `finish`), a call is not forwarded
    to the server on the handed world, or a call is missing from the evidence."""
    handed = world(tmp_path)

    async def agent(client: Client) -> list[str]:
        names = [t.name for t in (await client.list_tools()).tools]
        await client.call_tool("write_query", {"query": APPROVE})
        read = await client.call_tool("read_query", {"query": "SELECT status FROM refunds "
                                                     "WHERE refund_id = 'RFD_025'"})  # fmt: skip
        await client.call_tool("finish", {"message": "approved"})
        return [*names, text(read)]

    seen, evidence = through_door(sqlite_mcp_server, handed, agent)
    assert seen == [
        *("read_query", "write_query", "create_table", "list_tables", "describe_table"),
        *("append_insight", "finish", "[{'status': 'approved'}]"),
    ]
    assert [(c["id"], c["name"], c["tag"], c["result"]["ok"]) for c in evidence.tool_calls] == [
        ("tool-1", "write_query", "irreversible", True),
        ("tool-2", "read_query", "read", True),
    ]
    assert evidence.tool_calls[0]["arguments"] == {"query": APPROVE}
    facts = evidence.extra["tool_door"]
    assert facts["server"]["name"] == "sqlite"
    assert (facts["finished"], facts["final_message"], facts["forwarded"]) == (True, "approved", 2)
    assert facts["tools"]["append_insight"] == "irreversible"
    assert rows(handed.db_path, "SELECT status FROM refunds WHERE refund_id = 'RFD_025'") == [
        ("approved",)
    ]


def test_a_lost_acknowledgement_executes_the_call_and_withholds_its_answer(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if a lost acknowledgement is injected before forwarding (no payout in the
    file), if the agent sees the server's answer, or if the fault is not in the evidence;
    a blind retry of the same statement then pays twice, which the file shows."""
    rule = FaultRule(kind="ack_lost_after_commit", limit=1)
    handed = world(tmp_path, faults=(rule,))

    async def agent(client: Client) -> list[tuple[bool, str]]:
        first = await client.call_tool("write_query", {"query": PAYOUT})
        again = await client.call_tool("write_query", {"query": PAYOUT})
        return [(bool(first.is_error), text(first)), (bool(again.is_error), text(again))]

    seen, evidence = through_door(sqlite_mcp_server, handed, agent)
    assert seen == [
        (True, json.dumps({"error": CONNECTION_LOST})),
        (False, "[{'affected_rows': 1}]"),
    ]
    assert [(f["call"], f["tool"], f["kind"], f["committed"]) for f in evidence.faults] == [
        (0, "write_query", "ack_lost_after_commit", True)
    ]
    assert [c["result"]["ok"] for c in evidence.tool_calls] == [False, True]
    paid = "SELECT payout_id FROM payouts WHERE refund_id = 'RFD_025' ORDER BY payout_id"
    assert rows(handed.db_path, paid) == [("PO_032",), ("PO_033",)]


def test_a_failure_before_commit_never_reaches_the_server(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if a fail-before-commit call is forwarded (kaudit holds no transaction to
    roll it back, so a forwarded call would land), or reads are faulted too."""
    rule = FaultRule(kind="fail_before_commit")
    handed = world(tmp_path, faults=(rule,))

    async def agent(client: Client) -> list[bool]:
        paid = await client.call_tool("write_query", {"query": PAYOUT})
        read = await client.call_tool("read_query", {"query": "SELECT 1"})
        return [bool(paid.is_error), bool(read.is_error)]

    seen, evidence = through_door(sqlite_mcp_server, handed, agent)
    assert seen == [True, False]
    assert [(f["kind"], f["committed"], f["applied"]) for f in evidence.faults] == [
        ("fail_before_commit", False, 0)
    ]
    assert rows(handed.db_path, "SELECT COUNT(*) FROM payouts WHERE refund_id = 'RFD_025'") == [
        (0,)
    ]


def test_a_duplicated_delivery_reaches_the_server_twice(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if the door's fault layer cannot forward one call twice to the server (the
    file would hold one payout) or the agent is told about the second delivery."""
    handed = world(tmp_path, faults=(FaultRule(kind="duplicate_delivery"),))

    async def agent(client: Client) -> str:
        return text(await client.call_tool("write_query", {"query": PAYOUT}))

    seen, evidence = through_door(sqlite_mcp_server, handed, agent)
    assert seen == "[{'affected_rows': 1}]"
    assert [(f["kind"], f["applied"]) for f in evidence.faults] == [("duplicate_delivery", 2)]
    paid = "SELECT payout_id FROM payouts WHERE refund_id = 'RFD_025' ORDER BY payout_id"
    assert rows(handed.db_path, paid) == [("PO_032",), ("PO_033",)]


def test_calls_past_the_step_budget_are_refused_and_not_forwarded(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if the door forwards more calls than the task's `max_steps` (the third
    write would land in the file) or records the refused ones as calls."""
    handed = world(tmp_path, max_steps=2)

    async def agent(client: Client) -> list[str]:
        replies = [await client.call_tool("read_query", {"query": "SELECT 1"}) for _ in range(2)]
        replies.append(await client.call_tool("write_query", {"query": PAYOUT}))
        return [text(r) for r in replies]

    seen, evidence = through_door(sqlite_mcp_server, handed, agent)
    assert seen[2] == json.dumps({"error": STEP_BUDGET_USED})
    assert [c["name"] for c in evidence.tool_calls] == ["read_query", "read_query"]
    facts = evidence.extra["tool_door"]
    assert (facts["forwarded"], facts["refused_over_budget"]) == (2, 1)
    assert rows(handed.db_path, "SELECT COUNT(*) FROM payouts WHERE refund_id = 'RFD_025'") == [
        (0,)
    ]


def test_an_identity_on_a_sqlite_world_is_refused(tmp_path: Path, sqlite_mcp_server: Path) -> None:
    """Fails if a server that opens the world file itself is started under an identity
    kaudit cannot enforce beneath it."""
    handed = world(tmp_path, identity=Identity(role="agent", scope={"org_id": "ORG_1"}))
    door = ToolDoor(f"{sqlite_mcp_server} --db-path {{db}}")
    with pytest.raises(KauditError, match="cannot serve an identity"):
        asyncio.run(door.open(handed))


def test_a_db_field_without_a_world_file_is_refused(
    tmp_path: Path, sqlite_mcp_server: Path
) -> None:
    """Fails if `{db}` is passed through literally when the world is a database URL."""
    handed = world(tmp_path, db_path=None, database_url="postgresql://r@127.0.0.1:5432/w")
    door = ToolDoor(f"{sqlite_mcp_server} --db-path {{db}}")
    with pytest.raises(KauditError, match=r"\{db\}, which is not available"):
        asyncio.run(door.open(handed))


def test_a_server_that_does_not_start_is_a_harness_error_with_its_stderr(tmp_path: Path) -> None:
    """Fails if a dead tool server hangs the door or loses what it said on stderr."""
    handed = world(tmp_path)
    crash = "import sys; sys.stderr.write('no such database'); sys.exit(3)"
    door = ToolDoor(f'{sys.executable} -c "{crash}" {{db}}')

    async def main() -> None:
        try:
            await door.open(handed)
        finally:
            await door.close()

    with pytest.raises(SubstrateError, match=r"did not start.*no such database"):
        asyncio.run(main())


def test_an_unknown_program_is_refused_before_any_run() -> None:
    """Fails if a typo in the command surfaces only when a run starts."""
    with pytest.raises(KauditError, match="a program not found: 'no-such-mcp-server'"):
        ToolDoor("no-such-mcp-server --db-path {db}")
