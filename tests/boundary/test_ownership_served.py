"""Rows that belong to an out-of-scope row, written through `kaudit mcp serve`.

Each case is an escape found by serving builtin tasks to the official MCP client: the
table written has no scope column, its parent does. The out-of-scope write must be
refused and recorded as a boundary attempt, and its in-scope twin must still work, on
SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from kaudit.ledger import Ledger, RunRecord
from tests.pg import server_url
from tests.serve.conftest import KAUDIT

Call = tuple[str, dict[str, Any]]

CASES: dict[str, tuple[str, str, list[Call], list[Call], list[str]]] = {
    # task, identity, out-of-scope calls, in-scope calls, refused keys
    "invoice-line": (
        "billing/invoice-line-dedupe",
        "role: acme-billing\nscope: {billing_account_id: BA_001}\n",
        [
            ("delete_invoice_line", {"invoice_id": "INV_004", "line_no": 1}),  # BA_002
            ("delete_invoice_line", {"invoice_id": "INV_013", "line_no": 1}),  # BA_007
        ],
        [("delete_invoice_line", {"invoice_id": "INV_003", "line_no": 1})],  # BA_001
        ['["INV_004",1]', '["INV_013",1]'],
    ),
    "cab-decision": (
        "itsm/change-cab-gate",
        "role: acme-cab\nscope: {org_id: ORG_001}\n",
        [  # CHG_010 is ORG_006's change
            (
                "record_cab_decision",
                {"change_id": "CHG_010", "approver_id": "USR_003", "decision": "approved"},
            )
        ],
        [  # CHG_002 is ORG_001's; USR_003 is an ORG_001 user
            (
                "record_cab_decision",
                {"change_id": "CHG_002", "approver_id": "USR_003", "decision": "approved"},
            )
        ],
        ['["CHG_010","USR_003"]'],
    ),
    "refund-approval": (
        "billing/refund-approval-limit",
        "role: acme-billing\nscope: {billing_account_id: BA_001}\n",
        [("add_refund_approval", {"refund_id": "RFD_002", "approver": "someone"})],  # BA_006
        [("add_refund_approval", {"refund_id": "RFD_001", "approver": "someone"})],  # BA_001
        ['["RFD_002","someone"]'],
    ),
}
TABLES = {
    "invoice-line": "invoice_lines",
    "cab-decision": "cab_approvals",
    "refund-approval": "refund_approvals",
}


async def serve(ledger: Path, task: str, calls: list[Call], *extra: str) -> list[Any]:
    params = StdioServerParameters(
        command=KAUDIT[0],
        args=[*KAUDIT[1:], "mcp", "serve", "--task", task, "--ledger", str(ledger), *extra],
        env=dict(os.environ),  # the client passes only a few variables on: keep PYTHONPATH
    )
    async with Client(params) as client:
        replies = [await client.call_tool(name, args) for name, args in calls]
        await client.call_tool("finish", {"message": "Done."})
    return replies


def only_record(ledger: Path) -> RunRecord:
    with Ledger(ledger) as store:
        (record,) = list(store.records())
    return record


@pytest.mark.parametrize(
    "substrate", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_child_row_of_an_out_of_scope_parent_is_refused_and_recorded(
    tmp_path: Path, case: str, substrate: str
) -> None:
    """Fails if the scope applies only to tables that carry its column (the child write
    succeeds, no attempt is recorded: the escape), if it refuses the in-scope twin too
    (a boundary that refuses every child row), or if PostgreSQL refuses something else or
    names another key than SQLite."""
    task, identity_yaml, outside, inside, keys = CASES[case]
    identity = tmp_path / "identity.yaml"
    identity.write_text(identity_yaml)
    ledger = tmp_path / "served.sqlite"
    extra = ["--identity", str(identity), "--campaign", f"kaudit_own_{case}"]
    if substrate == "postgres":
        extra += ["--substrate", server_url()]
    replies = asyncio.run(serve(ledger, task, [*outside, *inside], *extra))
    refused, allowed = replies[: len(outside)], replies[len(outside) :]
    scope = identity_yaml.split("scope: {")[1].split("}")[0].replace(": ", " = ")
    for reply in refused:
        assert reply.is_error
        assert f"row outside the {scope} scope" in reply.content[0].text
    assert [r.is_error for r in allowed] == [False] * len(inside)
    assert json.loads(allowed[0].content[0].text)
    record = only_record(ledger)
    table = TABLES[case]
    assert [(a.call, a.tool, a.table, a.key) for a in record.boundary_attempts] == [
        (i, outside[i][0], table, key) for i, key in enumerate(keys)
    ]
    assert [c["result"]["ok"] for c in record.tool_calls] == [False] * len(outside) + [True] * len(
        inside
    )
