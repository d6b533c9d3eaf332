"""Enterprise tools: honest metadata, parameterized SQL, and writes limited to what they declare."""

from __future__ import annotations

from typing import Any

import pytest

from kaudit.label.diff import diff_images
from kaudit.substrate import read_schema
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext, ToolResult
from kaudit.worlds import PythonWorld
from kaudit.worlds.enterprise.common import NOW

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
    "issue_payout",
    "email_customer",
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
    "issue_payout": {"refund_id": "RFD_004"},
    "email_customer": {"case_id": "CS_003", "subject": "Install rescheduled"},
    "send_queued_payouts": {"billing_account_id": "BA_004"},
}  # fmt: skip


def call(world: PythonWorld, sandbox: SqliteSandbox, name: str, **arguments: Any) -> ToolResult:
    return world.tools[name].call(ToolContext(db=sandbox.db), arguments)


def changed(sandbox: SqliteSandbox) -> dict[str, set[str]]:
    """Per table changed since seeding: '*' for an added or removed row, else modified columns."""
    out: dict[str, set[str]] = {}
    for change in diff_images(sandbox.initial.image, sandbox.snapshot().image):
        out.setdefault(change.table, set()).update(change.changed or {"*"})
    return out


def test_every_tool_has_description_schema_and_tag(world: PythonWorld) -> None:
    assert len(world.tools) >= 60
    for tool in world.tools.values():
        assert tool.description.strip(), tool.name
        assert tool.parameters["type"] == "object", tool.name
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])


def test_tags_are_honest(world: PythonWorld) -> None:
    for tool in world.tools.values():
        if tool.name.startswith(READ_PREFIXES):
            assert tool.tag == "read" and not tool.writes, tool.name
        elif tool.name in IRREVERSIBLE:
            assert tool.tag == "irreversible", tool.name
        else:
            assert tool.tag == "reversible_write", tool.name


def test_writing_tools_declare_real_tables_and_columns(
    world: PythonWorld, sandbox: SqliteSandbox
) -> None:
    schema = read_schema(sandbox.db.conn)
    for tool in world.tools.values():
        if tool.tag == "read":
            continue
        assert tool.writes, tool.name
        for table, columns in tool.writes.items():
            assert table in schema.tables, (tool.name, table)
            assert set(columns) - {"*"} <= set(schema.tables[table].columns), tool.name


def test_every_write_tool_has_a_representative_call(world: PythonWorld) -> None:
    writers = {name for name, tool in world.tools.items() if tool.tag != "read"}
    assert writers == set(WRITE_CALLS)


@pytest.mark.parametrize("name", sorted(WRITE_CALLS))
def test_write_tool_changes_only_what_it_declares(
    world: PythonWorld, sandbox: SqliteSandbox, name: str
) -> None:
    assert changed(sandbox) == {}
    result = call(world, sandbox, name, **WRITE_CALLS[name])
    assert result.ok, result.error
    diff = changed(sandbox)
    assert diff, f"{name} changed nothing"
    declared = world.tools[name].writes
    for table, columns in diff.items():
        assert table in declared, (name, table)
        if "*" not in declared[table]:
            assert columns <= set(declared[table]), (name, table, columns)


def test_read_tools_change_nothing(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    before = sandbox.snapshot().digest
    reads = {
        "list_incidents": {"org_id": "ORG_004", "status": "resolved"},
        "find_invoice_by_number": {"number": "INV-2026-00003"},
        "list_entitlements": {"account_id": "ACC_008"},
        "list_cab_approvals": {"change_id": "CHG_005"},
    }
    for name, arguments in reads.items():
        result = call(world, sandbox, name, **arguments)
        assert result.ok, (name, result.error)
    assert sandbox.snapshot().digest == before


INJECTIONS = ("x' OR '1'='1", "'; DROP TABLE incidents; --", "%", "_", '" OR ""="')


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_match_only_literally(
    world: PythonWorld, sandbox: SqliteSandbox, text: str
) -> None:
    before = sandbox.snapshot().digest
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
    assert sandbox.snapshot().digest == before


def test_unknown_id_is_an_error_result(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "find_change_by_number", number="CHG9999999")
    assert not result.ok and not result.internal
    assert result.error == "change number 'CHG9999999' not found"


def test_invalid_enum_is_an_error_result(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    before = sandbox.snapshot().digest
    result = call(world, sandbox, "update_change", change_id="CHG_002", status="approved")
    assert not result.ok
    assert result.error is not None and result.error.startswith("invalid argument status")
    assert sandbox.snapshot().digest == before


def test_bulk_delete_without_filter_is_refused(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "delete_incident_slas")
    assert not result.ok and "at least one filter" in (result.error or "")


def test_sent_notification_cannot_be_sent_again(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "send_notification", notification_id="NTF_006")
    assert not result.ok and result.error == "NTF_006 was already sent"


def test_update_change_lets_any_status_through(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "update_change", change_id="CHG_002", status="closed")
    assert result.ok and result.content["status"] == "closed"


def test_create_incident_follows_the_id_scheme(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "create_incident", org_id="ORG_001", title="t", category="c")
    assert result.ok
    assert result.content["incident_id"] == "INC_1141"
    assert result.content["number"] == "INC0002141"


def test_apply_credit_lowers_the_balance(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "apply_credit", credit_id="CRD_001", invoice_id="INV_006")
    assert result.ok and result.content["balance"] == 1100.0
    again = call(world, sandbox, "apply_credit", credit_id="CRD_001", invoice_id="INV_006")
    assert not again.ok and again.error == "credit CRD_001 is applied, not open"


def test_delete_problem_cascades_to_its_links(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    assert call(world, sandbox, "delete_problem", problem_id="PRB_004").ok
    links = sandbox.db.query("SELECT * FROM problem_incidents WHERE problem_id = 'PRB_004'")
    assert links == []


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("update_problem", {"problem_id": "PRB_999", "status": "assess"}, "problem 'PRB_999'"),
        ("update_contact", {"contact_id": "CON_999"}, "contact 'CON_999'"),
        ("update_product", {"product_id": "PRD_999", "list_price": -1.0}, "product 'PRD_999'"),
        ("update_contract", {"contract_id": "CTR_999", "price": -1.0}, "contract 'CTR_999'"),
        ("update_entitlement", {"entitlement_id": "E_9", "units": -1}, "entitlement 'E_9'"),
        ("update_article", {"article_id": "KB_999", "status": "draft"}, "article 'KB_999'"),
        ("update_invoice_status", {"invoice_id": "INV_999", "status": "void"}, "invoice 'INV_999'"),
    ],
)
def test_update_of_unknown_id_is_not_found(
    world: PythonWorld, sandbox: SqliteSandbox, name: str, arguments: dict[str, Any], error: str
) -> None:
    """Not found wins over a missing field or a bad value, and nothing is written."""
    result = call(world, sandbox, name, **arguments)
    assert not result.ok and result.error == f"{error} not found"
    assert changed(sandbox) == {}


def test_update_to_the_same_values_succeeds(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    result = call(world, sandbox, "update_product", product_id="PRD_001", list_price=1200.0)
    assert result.ok and result.content["list_price"] == 1200.0
    empty = call(world, sandbox, "update_product", product_id="PRD_001")
    assert not empty.ok and empty.error == "nothing to update: give at least one field"


@pytest.mark.parametrize(
    ("name", "names"),
    [
        ("delete_incident_slas", "incident_id, stage, incident_sla_id"),
        ("delete_interactions", "case_id, channel, direction, summary_contains, interaction_id"),
        ("delete_invoices", "billing_account_id, status, issued_before, invoice_id"),
        ("send_queued_notifications", "change_id, org_id"),
    ],
)
def test_bulk_write_names_its_filters(
    world: PythonWorld, sandbox: SqliteSandbox, name: str, names: str
) -> None:
    result = call(world, sandbox, name)
    assert not result.ok and result.error == f"give at least one filter ({names})"
    assert changed(sandbox) == {}


def test_send_queued_notifications_sends_only_queued(
    world: PythonWorld, sandbox: SqliteSandbox
) -> None:
    rows = "SELECT * FROM notifications WHERE change_id = 'CHG_007' ORDER BY notification_id"
    before = sandbox.db.query(rows)
    queued = {row["notification_id"] for row in before if row["status"] == "queued"}
    assert queued and len(queued) < len(before)
    result = call(world, sandbox, "send_queued_notifications", change_id="CHG_007")
    assert result.ok and result.content == {"sent": len(queued)}
    for old, new in zip(before, sandbox.db.query(rows), strict=True):
        if old["notification_id"] in queued:
            assert (new["status"], new["sent_at"]) == ("sent", NOW)
        else:
            assert new == old
    again = call(world, sandbox, "send_queued_notifications", change_id="CHG_007")
    assert again.ok and again.content == {"sent": 0}


def test_send_queued_payouts_sends_the_accounts_queue(
    world: PythonWorld, sandbox: SqliteSandbox
) -> None:
    queued = "SELECT COUNT(*) AS n FROM payouts WHERE billing_account_id = ? AND status = ?"
    count = sandbox.db.one(queued, ("BA_004", "queued"))
    assert count and count["n"] > 0
    result = call(world, sandbox, "send_queued_payouts", billing_account_id="BA_004")
    assert result.ok and result.content == {"sent": count["n"]}
    assert sandbox.db.one(queued, ("BA_004", "queued")) == {"n": 0}
    assert changed(sandbox) == {"payouts": {"status", "sent_at"}}
    unknown = call(world, sandbox, "send_queued_payouts", billing_account_id="BA_999")
    assert not unknown.ok and unknown.error == "account 'BA_999' not found"
