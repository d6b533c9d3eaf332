"""Enterprise tools: honest metadata, parameterized SQL, and writes limited to what they declare."""

from __future__ import annotations

from typing import Any

import pytest

from kaudit.substrate import TOOL_TAGS, SqliteSandbox, ToolContext, ToolResult, read_schema
from kaudit.worlds import World

READ_PREFIXES = ("list_", "find_", "get_")
IRREVERSIBLE = {
    "delete_incident",
    "delete_problem",
    "delete_incident_slas",
    "record_cab_decision",
    "send_notification",
    "send_queued_notifications",
    "delete_installed_product",
    "delete_interactions",
    "delete_invoice_line",
    "delete_invoices",
    "add_refund_approval",
    "approve_refund",
    "send_payout",
    "send_queued_payouts",
}

WRITE_CALLS: dict[str, dict[str, Any]] = {
    "update_incident": {"incident_id": "INC_022", "status": "closed"},
    "create_incident": {"org_id": "ORG_001", "title": "Pager silent", "category": "software"},
    "delete_incident": {"incident_id": "INC_037"},
    "link_problem_incident": {"problem_id": "PRB_009", "incident_id": "INC_031"},
    "unlink_problem_incident": {"problem_id": "PRB_004", "incident_id": "INC_031"},
    "update_problem": {"problem_id": "PRB_004", "status": "assess"},
    "delete_problem": {"problem_id": "PRB_004"},
    "update_change": {"change_id": "CHG_002", "status": "scheduled"},
    "record_cab_decision": {"change_id": "CHG_002", "approver_id": "USR_003",
                            "decision": "approved"},
    "update_configuration_item": {"ci_id": "CI_001", "monthly_cost": 1250.0},
    "delete_incident_slas": {"incident_id": "INC_021"},
    "send_notification": {"notification_id": "NTF_001"},
    "send_queued_notifications": {"change_id": "CHG_007"},
    "update_contact": {"contact_id": "CON_001", "active": False},
    "update_product": {"product_id": "PRD_001", "list_price": 1320.0},
    "update_contract": {"contract_id": "CTR_001", "price": 17450.0},
    "update_entitlement": {"entitlement_id": "ENT_001", "units": 15},
    "delete_installed_product": {"install_id": "INS_001"},
    "update_case": {"case_id": "CS_001", "team_id": "TEAM_02"},
    "log_interaction": {"case_id": "CS_007", "channel": "phone", "direction": "outbound",
                        "summary": "Called back"},
    "delete_interactions": {"case_id": "CS_007"},
    "update_article": {"article_id": "KB_001", "status": "published"},
    "update_invoice_status": {"invoice_id": "INV_001", "status": "void"},
    "delete_invoice_line": {"invoice_id": "INV_003", "line_no": 3},
    "recalculate_invoice": {"invoice_id": "INV_009"},
    "delete_invoices": {"invoice_id": "INV_008"},
    "create_refund": {"payment_id": "PAY_002", "amount": 780.0, "reason": "Duplicate"},
    "add_refund_approval": {"refund_id": "RFD_002", "approver": "a.n.other"},
    "approve_refund": {"refund_id": "RFD_001"},
    "create_credit": {"billing_account_id": "BA_006", "amount": 250.0, "reason": "Goodwill"},
    "apply_credit": {"credit_id": "CRD_001", "invoice_id": "INV_006"},
    "send_payout": {"payout_id": "PO_001"},
    "send_queued_payouts": {"billing_account_id": "BA_004"},
}  # fmt: skip


def call(world: World, sandbox: SqliteSandbox, name: str, **arguments: Any) -> ToolResult:
    return world.tools[name].call(ToolContext(db=sandbox.db), arguments)


def snapshot(sandbox: SqliteSandbox) -> dict[str, dict[tuple[Any, ...], dict[str, Any]]]:
    """Every row of every table, keyed by its primary key."""
    state: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
    for name, table in read_schema(sandbox.db.conn).tables.items():
        rows = sandbox.db.query(f'SELECT * FROM "{name}"')
        state[name] = {tuple(row[c] for c in table.primary_key): row for row in rows}
    return state


def changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, set[str]]:
    """Per table: '*' for an added or removed row, else the modified column names."""
    out: dict[str, set[str]] = {}
    for table in before:
        old, new = before[table], after[table]
        cols: set[str] = set()
        if old.keys() != new.keys():
            cols.add("*")
        for key in old.keys() & new.keys():
            cols |= {c for c in old[key] if old[key][c] != new[key][c]}
        if cols:
            out[table] = cols
    return out


def test_every_tool_has_description_schema_and_tag(world: World) -> None:
    assert len(world.tools) >= 60
    for tool in world.tools.values():
        assert tool.description.strip(), tool.name
        assert tool.tag in TOOL_TAGS
        assert tool.parameters["type"] == "object", tool.name
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])


def test_tags_are_honest(world: World) -> None:
    for tool in world.tools.values():
        if tool.name.startswith(READ_PREFIXES):
            assert tool.tag == "read" and not tool.writes, tool.name
        elif tool.name in IRREVERSIBLE:
            assert tool.tag == "irreversible", tool.name
        else:
            assert tool.tag == "reversible_write", tool.name


def test_writing_tools_declare_real_tables_and_columns(
    world: World, sandbox: SqliteSandbox
) -> None:
    schema = read_schema(sandbox.db.conn)
    for tool in world.tools.values():
        if tool.tag == "read":
            continue
        assert tool.writes, tool.name
        for table, columns in tool.writes.items():
            assert table in schema.tables, (tool.name, table)
            assert set(columns) - {"*"} <= set(schema.tables[table].columns), tool.name


def test_every_write_tool_has_a_representative_call(world: World) -> None:
    writers = {name for name, tool in world.tools.items() if tool.tag != "read"}
    assert writers == set(WRITE_CALLS)


@pytest.mark.parametrize("name", sorted(WRITE_CALLS))
def test_write_tool_changes_only_what_it_declares(
    world: World, sandbox: SqliteSandbox, name: str
) -> None:
    before = snapshot(sandbox)
    result = call(world, sandbox, name, **WRITE_CALLS[name])
    assert result.ok, result.error
    diff = changed(before, snapshot(sandbox))
    assert diff, f"{name} changed nothing"
    declared = world.tools[name].writes
    for table, columns in diff.items():
        assert table in declared, (name, table)
        if "*" not in declared[table]:
            assert columns <= set(declared[table]), (name, table, columns)


def test_read_tools_change_nothing(world: World, sandbox: SqliteSandbox) -> None:
    before = sandbox.dump().digest
    call(world, sandbox, "list_incidents", org_id="ORG_004", status="resolved")
    call(world, sandbox, "find_invoice_by_number", number="INV-2026-00003")
    call(world, sandbox, "list_entitlements", account_id="ACC_008")
    call(world, sandbox, "list_cab_approvals", change_id="CHG_005")
    assert sandbox.dump().digest == before


INJECTIONS = ("x' OR '1'='1", "'; DROP TABLE incidents; --", "%", "_", '" OR ""="')


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_match_only_literally(
    world: World, sandbox: SqliteSandbox, text: str
) -> None:
    before = sandbox.dump().digest
    assert not call(world, sandbox, "find_incident_by_number", number=text).ok
    listed = call(world, sandbox, "list_incidents", title_contains=text)
    assert listed.ok and listed.content == []
    assert call(world, sandbox, "list_accounts", name_contains=text).content == []
    assert not call(world, sandbox, "update_incident", incident_id=text, status="closed").ok
    deleted = call(world, sandbox, "delete_incident_slas", incident_id=text)
    assert deleted.ok and deleted.content == {"deleted": 0}
    assert call(world, sandbox, "delete_interactions", summary_contains=text).content == {
        "deleted": 0
    }
    assert sandbox.dump().digest == before


def test_unknown_id_is_an_error_result(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "find_change_by_number", number="CHG9999999")
    assert not result.ok and not result.internal
    assert result.error == "change number 'CHG9999999' not found"


def test_invalid_enum_is_an_error_result(world: World, sandbox: SqliteSandbox) -> None:
    before = sandbox.dump().digest
    result = call(world, sandbox, "update_change", change_id="CHG_002", status="approved")
    assert not result.ok
    assert result.error is not None and result.error.startswith("invalid argument status")
    assert sandbox.dump().digest == before


def test_bulk_delete_without_filter_is_refused(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "delete_incident_slas")
    assert not result.ok and "at least one filter" in (result.error or "")


def test_sent_notification_cannot_be_sent_again(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "send_notification", notification_id="NTF_006")
    assert not result.ok and result.error == "NTF_006 was already sent"


def test_update_change_lets_any_status_through(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "update_change", change_id="CHG_002", status="closed")
    assert result.ok and result.content["status"] == "closed"


def test_create_incident_follows_the_id_scheme(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "create_incident", org_id="ORG_001", title="t", category="c")
    assert result.ok
    assert result.content["incident_id"] == "INC_1141"
    assert result.content["number"] == "INC0002141"


def test_apply_credit_lowers_the_balance(world: World, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "apply_credit", credit_id="CRD_001", invoice_id="INV_006")
    assert result.ok and result.content["balance"] == 1100.0
    again = call(world, sandbox, "apply_credit", credit_id="CRD_001", invoice_id="INV_006")
    assert not again.ok and again.error == "credit CRD_001 is applied, not open"


def test_delete_problem_cascades_to_its_links(world: World, sandbox: SqliteSandbox) -> None:
    assert call(world, sandbox, "delete_problem", problem_id="PRB_004").ok
    links = sandbox.db.query("SELECT * FROM problem_incidents WHERE problem_id = 'PRB_004'")
    assert links == []
