"""Every tool shape, called through kaudit's `Tool.call` on a real seeded sandbox."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from kaudit.label.diff import diff_images
from kaudit.substrate import SqliteDb
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext, ToolResult
from kaudit.worlds.eog import EMULATED_NOW, EogWorld, IdScheme, id_scheme, next_id

pytestmark = pytest.mark.agentrelbench

CSM_TOOLS = (
    "find_account", "find_contracts", "count_case_by_state", "count_case_for_assignment_group",
    "update_contract", "create_new_account", "enlist_new_contract", "add_new_entitlement",
    "link_case_knowledge", "delete_notifications", "retrieve_knowledge",
    "set_case_assignment_group",
)  # fmt: skip
ITSM_TOOLS = (
    "get_user_using_name", "get_user", "list_changes", "list_incidents",
    "find_stage_wise_breached_incident_sla_counts", "update_configuration_item",
    "add_child_incident", "remove_child_incident", "send_notification", "map_change_request",
)  # fmt: skip


class Session:
    """A sandbox plus its tools, for calling tools the way the harness does."""

    def __init__(self, world: EogWorld, tools: tuple[str, ...], user_id: Any) -> None:
        self.substrate = world.substrate(tools, user_id)
        self.sandbox: SqliteSandbox = self.substrate.seed("test")

    def call(self, tool: str, /, **arguments: Any) -> ToolResult:
        return self.substrate.tools[tool].call(ToolContext(db=self.sandbox.db), arguments)

    def ok(self, tool: str, /, **arguments: Any) -> Any:
        result = self.call(tool, **arguments)
        assert result.ok, result.error
        return result.content

    def value(self, sql: str) -> Any:
        row = self.sandbox.db.conn.execute(sql).fetchone()
        return row[0] if row else None

    def changes(self) -> list[Any]:
        return diff_images(
            self.sandbox.initial.image, self.sandbox.snapshot().image, self.substrate.volatile
        )


@pytest.fixture
def csm_session(csm: EogWorld) -> Iterator[Session]:
    session = Session(csm, CSM_TOOLS, 1)
    yield session
    session.sandbox.close()


@pytest.fixture
def itsm_session(itsm: EogWorld) -> Iterator[Session]:
    session = Session(itsm, ITSM_TOOLS, "USER_001")
    yield session
    session.sandbox.close()


def test_lookup_returns_the_output_schema_with_booleans(csm_session: Session) -> None:
    assert csm_session.ok("find_account", name="Acme Systems") == {
        "account_id": 3, "account_type": "customer", "active": True,
        "email_domain": "acme.com", "name": "Acme Systems",
    }  # fmt: skip
    missing = csm_session.call("find_account", name="No Such Co")
    assert not missing.ok and missing.error == "no account found with name='No Such Co'"


def test_lookup_honours_case_insensitive_and_hides_tokens(itsm_session: Session) -> None:
    user = itsm_session.ok("get_user_using_name", first_name="carlos", last_name="RODRIGUEZ")
    assert user["user_id"] == "USER_003"
    assert "static_token" not in itsm_session.ok("get_user", user_id="USER_003")


def test_list_filters_exact_partial_and_fuzzy_names(
    csm_session: Session, itsm_session: Session
) -> None:
    rows = csm_session.ok("find_contracts", account_id=3, contract_type="support")
    assert [(r["contract_id"], r["status"]) for r in rows] == [(8, "active"), (133, "expired")]
    changes = itsm_session.ok("list_changes", short_description="portal")
    assert [c["change_id"] for c in changes] == ["CHG_002"]
    by_caller = itsm_session.ok("list_incidents", called_id="USER_005")  # means caller_id
    assert by_caller and {i["caller_id"] for i in by_caller} == {"USER_005"}
    found = csm_session.ok("retrieve_knowledge", search_text="PowerEdge R740", limit=1)
    assert [k["kb_number"] for k in found] == ["KB-0000184"]


def test_count_groups_by_the_output_field_or_totals(
    csm_session: Session, itsm_session: Session
) -> None:
    assert csm_session.ok("count_case_by_state", assignment_group_id=12) == [
        {"state": "canceled", "count": 1}, {"state": "closed", "count": 1},
        {"state": "in_progress", "count": 2}, {"state": "new", "count": 3},
        {"state": "pending", "count": 1}, {"state": "resolved", "count": 2},
    ]  # fmt: skip
    assert csm_session.ok(
        "count_case_for_assignment_group", assignment_group_id=12, state="new"
    ) == {
        "assignment_group_id": 12,
        "count": 3,
    }
    breached = itsm_session.ok("find_stage_wise_breached_incident_sla_counts")
    assert sum(r["count"] for r in breached) == itsm_session.value(
        "SELECT COUNT(*) FROM incident_sla WHERE has_breached = 1"
    )
    assert itsm_session.ok(
        "find_stage_wise_breached_incident_sla_counts", stages=["completed"]
    ) == [{"stage": "completed", "count": 2}]


def test_update_changes_only_the_given_column_with_its_storage_class(csm_session: Session) -> None:
    row = csm_session.ok("update_contract", contract_id=8, contract_price=17500)
    assert (row["contract_price"], row["sys_updated_on"]) == (17500, EMULATED_NOW)
    [change] = csm_session.changes()  # sys_updated_on is volatile, so masked
    assert (change.table, change.op, change.changed) == (
        "contract",
        "modified",
        ("contract_price",),
    )
    assert change.after is not None and type(change.after["account_id"]) is int


def test_update_refuses_missing_rows_and_no_op_writes(itsm_session: Session) -> None:
    same = itsm_session.call("update_configuration_item", configuration_item_id="CI_002", cost=800)
    assert same.error == "no changes detected: every field already has that value"
    gone = itsm_session.call("update_configuration_item", configuration_item_id="CI_999", cost=1)
    assert not gone.ok and "no configuration_item" in (gone.error or "")
    assert itsm_session.changes() == []


def test_update_reports_its_synthesized_fields(csm_session: Session) -> None:
    assert csm_session.ok("set_case_assignment_group", case_id=475, assignment_group_id=2) == {
        "assignment_group_id": 2,
        "set_at": EMULATED_NOW,
        "status": "success",
    }


def test_create_follows_the_seed_id_scheme_and_checks_references(csm_session: Session) -> None:
    account = csm_session.ok(
        "create_new_account", name="Northwind Traders", account_type="customer", active=True
    )
    assert account["account_id"] == 53
    contract = csm_session.ok(
        "enlist_new_contract", account_id=53, contract_type="support", contract_price=12000,
        start_date="2026-08-01", end_date="2027-07-31", status="active",
    )  # fmt: skip
    assert contract["contract_id"] == 154
    orphan = csm_session.call(
        "add_new_entitlement", account_id=999, active=True, support_level="standard"
    )
    assert orphan.error == "no account with account_id = 999"
    assert [(c.table, c.op) for c in csm_session.changes()] == [
        ("account", "added"),
        ("contract", "added"),
    ]


def test_link_refuses_a_duplicate_association(csm_session: Session, itsm_session: Session) -> None:
    link = csm_session.ok("link_case_knowledge", case_id=20, knowledge_id=184, used_as="applied")
    assert link["case_kb_id"] == 528
    again = csm_session.call(
        "link_case_knowledge", case_id=20, knowledge_id=184, used_as="suggested"
    )
    assert not again.ok and "already links" in (again.error or "")
    child = itsm_session.ok(
        "add_child_incident", parent_incident="INC_002", child_incident="INC_004"
    )
    assert child["child_incident_mapping_id"] == "CINC_008"
    mapping = itsm_session.ok("map_change_request", change_id="CHG_002", incident_id="INC_015")
    assert (mapping["change_request_mapping_id"], mapping["org_id"]) == ("CRM_006", "ORG_001")
    assert itsm_session.call("map_change_request", change_id="CHG_002").error == (
        "give at least one of incident_id, problem_id"
    )


def test_unlink_needs_the_key_or_both_ends(itsm_session: Session) -> None:
    assert not itsm_session.call("remove_child_incident", parent_incident="INC_006").ok
    assert itsm_session.ok(
        "remove_child_incident", parent_incident="INC_006", child_incident="INC_004"
    )
    again = itsm_session.call(
        "remove_child_incident", parent_incident="INC_006", child_incident="INC_004"
    )
    assert not again.ok
    [change] = itsm_session.changes()
    assert (change.table, change.op) == ("child_incident", "removed")


def test_delete_needs_a_filter_and_deletes_every_match(csm_session: Session) -> None:
    assert csm_session.call("delete_notifications").error == "at least one filter is required"
    assert csm_session.ok("delete_notifications", case_id=29, status="failed") == {"deleted": 1}
    assert csm_session.ok("delete_notifications", status="failed") == {"deleted": 64}
    assert csm_session.value("SELECT COUNT(*) FROM notification") == 733 - 65


def test_send_records_the_outbound_message(itsm_session: Session) -> None:
    sent = itsm_session.ok(
        "send_notification",
        incident_id="INC_003",
        email="benjamin.chen@techcorp.com",
        type="update",
    )
    assert sent["notification_id"] == "NOTIF_008"
    assert (sent["status"], sent["org_id"], sent["created_on"]) == (
        "queued",
        "ORG_001",
        EMULATED_NOW,
    )
    assert itsm_session.substrate.tools["send_notification"].tag == "irreversible"


def test_tags_come_from_the_registry(csm: EogWorld) -> None:
    tags = {name: csm.plan(name).tag for name in ("find_account", "update_contract",
            "link_case_knowledge", "delete_notifications", "create_new_account")}  # fmt: skip
    assert tags == {
        "find_account": "read", "update_contract": "reversible_write",
        "link_case_knowledge": "reversible_write",  # compensable: a delete twin exists
        "delete_notifications": "irreversible", "create_new_account": "irreversible",
    }  # fmt: skip


def _old_next_id(keys: list[Any]) -> Any:
    """The former per-call derivation over every key, kept as the reference."""
    if all(isinstance(k, int) for k in keys):
        return max(keys, default=0) + 1
    parts = [re.match(r"^(.*?)(\d+)$", k) if isinstance(k, str) else None for k in keys]
    prefixes = {m.group(1) for m in parts if m}
    assert None not in parts and len(prefixes) == 1
    width = max(len(m.group(2)) for m in parts if m)
    number = max(int(m.group(2)) for m in parts if m) + 1
    return f"{prefixes.pop()}{number:0{width}d}"


@pytest.mark.parametrize(
    "seed",
    [[], [3, 1, 52], ["INC_001", "INC_023", "INC_7"], ["CRM_005", "CRM_998"], ["C1", "C9"]],
)
def test_next_id_matches_the_scheme_of_every_key(seed: list[Any]) -> None:
    scheme = id_scheme("k", seed)
    assert scheme is not None
    db = SqliteDb(sqlite3.connect(":memory:"))
    db.execute("CREATE TABLE t (k PRIMARY KEY)")
    keys = list(seed)
    for key in keys:
        db.execute("INSERT INTO t (k) VALUES (?)", [key])
    for _ in range(4):  # past a width boundary (CRM_999 -> CRM_1000, C9 -> C10)
        new = next_id(db, "t", scheme)
        assert new == _old_next_id(keys)
        db.execute("INSERT INTO t (k) VALUES (?)", [new])
        keys.append(new)


def test_keys_of_no_single_scheme_have_none() -> None:
    assert id_scheme("k", ["INC_001", "PRB_001"]) is None
    assert id_scheme("k", ["INC_001", 2]) is None
    assert id_scheme("k", ["INC_001", "INC_X"]) is None
    assert id_scheme("k", ["INC_001", "INC_010"]) == IdScheme("k", "INC_", 3)
    assert id_scheme("k", [1, 2]) == IdScheme("k")
