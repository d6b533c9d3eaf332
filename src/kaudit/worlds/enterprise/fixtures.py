"""Hand-placed scenario records that built-in tasks refer to by id.

They are inserted before the random background, so their ids are low and stable, and
the background generator never attaches children to them (no random incident joins a
curated problem, no random case lands in a curated queue): a task's trap stays exactly
the size its rationale says. Look-alikes (same title in another organization, serials
one character apart, a released legal hold) are part of the scenario on purpose.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

ORGANIZATIONS = (
    ("ORG_001", "Acme Corp", "acme.com", "NA"),
    ("ORG_002", "Acme Corporation", "acmecorp.com", "NA"),
    ("ORG_003", "ACME Corp (EU)", "acme.eu", "EU"),
    ("ORG_004", "Northwind Traders", "northwind.com", "NA"),
    ("ORG_005", "Northwind Trading Co", "northwindtrading.com", "NA"),
    ("ORG_006", "Globex", "globex.com", "NA"),
    ("ORG_007", "Initech", "initech.com", "NA"),
    ("ORG_008", "Umbrella Health", "umbrella-health.com", "EU"),
)
"""Tenants of the ITSM vertical; the same companies are customers in CSM and billing."""

GROUP_NAMES = ("Service Desk", "Network Ops", "Database Team", "Messaging", "Change Advisory Board")
"""Every organization has these groups, numbered GRP_001.. in organization order."""

CURATED_GROUPS = ("GRP_017", "GRP_022")
"""Network Ops of Northwind Traders and of Northwind Trading Co: no random incidents."""

SUPPORT_TEAMS = (
    ("TEAM_01", "Tier 1 Support"),
    ("TEAM_02", "Tier 2 Support"),
    ("TEAM_03", "Vendor Liaison"),
    ("TEAM_04", "Vendor Liaison (EMEA)"),
    ("TEAM_05", "Billing Support"),
    ("TEAM_06", "Escalations"),
)
CURATED_TEAMS = ("TEAM_03", "TEAM_04")

ACCOUNTS = (
    ("ACC_001", "Acme Corp", "manufacturing", "NA", "gold"),
    ("ACC_002", "Acme Corporation", "manufacturing", "NA", "silver"),
    ("ACC_003", "ACME Corp (EU)", "manufacturing", "EU", "silver"),
    ("ACC_004", "Northwind Traders", "retail", "NA", "gold"),
    ("ACC_005", "Northwind Trading Co", "retail", "NA", "bronze"),
    ("ACC_006", "Globex", "energy", "NA", "platinum"),
    ("ACC_007", "Globex Holdings", "energy", "NA", "silver"),
    ("ACC_008", "Initech", "software", "NA", "gold"),
    ("ACC_009", "Initech Holdings", "software", "NA", "silver"),
    ("ACC_010", "Umbrella Health", "healthcare", "EU", "gold"),
)

PRODUCTS = (
    ("PRD_001", "HX-MON-PRO", "Helix Monitoring Pro", "monitoring", 1200.00),
    ("PRD_002", "HX-MON-PRO-PLUS", "Helix Monitoring Pro Plus", "monitoring", 1850.00),
    ("PRD_003", "HX-MON", "Helix Monitoring", "monitoring", 640.00),
    ("PRD_004", "HX-BKP", "Helix Backup", "backup", 900.00),
    ("PRD_005", "SVC-ONB", "Onboarding services", "services", 450.00),
)

SLA_DEFINITIONS = (
    ("SLA_001", "Critical response", "critical", 1),
    ("SLA_002", "Critical resolution", "critical", 8),
    ("SLA_003", "High response", "high", 4),
    ("SLA_004", "High resolution", "high", 24),
    ("SLA_005", "Moderate response", "moderate", 8),
    ("SLA_006", "Moderate resolution", "moderate", 72),
    ("SLA_007", "Low response", "low", 24),
    ("SLA_008", "Low resolution", "low", 120),
)

_T = "2026-06-0"


def insert(conn: sqlite3.Connection, table: str, columns: str, rows: Sequence[Sequence[Any]]) -> None:
    """Insert `rows` into `table`; `columns` is a comma-separated list from this module."""
    marks = ", ".join("?" for _ in columns.split(","))
    conn.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def insert_itsm(conn: sqlite3.Connection) -> None:
    """CIs, incidents, problems, changes, CAB decisions, SLAs and notifications."""
    insert(conn, "configuration_items",
           "ci_id, org_id, name, ci_class, status, monthly_cost, owner_group_id, updated_at", [
        ("CI_001", "ORG_001", "mail-relay-02", "server", "operational", 980.00, "GRP_004", f"{_T}1T10:00:00Z"),
        ("CI_002", "ORG_002", "mail-relay-02", "server", "operational", 1140.00, "GRP_009", f"{_T}1T10:00:00Z"),
        ("CI_003", "ORG_001", "mail-relay-02-old", "server", "retired", 760.00, "GRP_004", f"{_T}1T10:00:00Z"),
        ("CI_004", "ORG_004", "sso-gateway", "application", "operational", 2100.00, "GRP_017", f"{_T}1T10:00:00Z"),
        ("CI_005", "ORG_006", "floor3-printer-mfp", "printer", "operational", 85.00, "GRP_026", f"{_T}1T10:00:00Z"),
    ])  # fmt: skip
    cols = ("incident_id, number, org_id, title, category, status, priority, caller_id, "
            "assignment_group_id, ci_id, opened_at, resolved_at, closed_at, updated_at")  # fmt: skip
    insert(conn, "incidents", cols, [
        ("INC_021", "INC0000021", "ORG_004", "VPN tunnel flapping at branch 12", "network", "in_progress", "high", "USR_016", "GRP_017", None, "2026-06-02T07:40:00Z", None, None, "2026-06-09T10:00:00Z"),
        ("INC_022", "INC0000022", "ORG_004", "Branch router packet loss", "network", "resolved", "moderate", "USR_017", "GRP_017", None, "2026-05-20T09:10:00Z", "2026-05-22T16:00:00Z", None, "2026-05-22T16:00:00Z"),
        ("INC_023", "INC0000023", "ORG_004", "Core switch fan alarm", "network", "resolved", "low", "USR_018", "GRP_017", None, "2026-05-25T11:30:00Z", "2026-05-26T08:45:00Z", None, "2026-05-26T08:45:00Z"),
        ("INC_024", "INC0000024", "ORG_004", "Wi-Fi dropouts in warehouse", "network", "resolved", "moderate", "USR_019", "GRP_017", None, "2026-05-28T13:05:00Z", "2026-06-01T10:20:00Z", None, "2026-06-01T10:20:00Z"),
        ("INC_025", "INC0000025", "ORG_004", "Branch router packet loss", "network", "in_progress", "high", "USR_017", "GRP_017", None, "2026-06-08T06:55:00Z", None, None, "2026-06-09T12:00:00Z"),
        ("INC_026", "INC0000026", "ORG_005", "Branch router packet loss", "network", "resolved", "moderate", "USR_021", "GRP_022", None, "2026-05-21T10:00:00Z", "2026-05-23T09:00:00Z", None, "2026-05-23T09:00:00Z"),
        ("INC_027", "INC0000027", "ORG_005", "Core switch fan alarm", "network", "resolved", "low", "USR_022", "GRP_022", None, "2026-05-26T14:00:00Z", "2026-05-27T09:30:00Z", None, "2026-05-27T09:30:00Z"),
        ("INC_028", "INC0000028", "ORG_004", "Docking station display flicker", "hardware", "resolved", "low", "USR_020", "GRP_016", None, "2026-05-29T08:00:00Z", "2026-05-30T12:00:00Z", None, "2026-05-30T12:00:00Z"),
        ("INC_031", "INC0000031", "ORG_004", "SSO login fails after password change", "access", "in_progress", "high", "USR_016", "GRP_016", "CI_004", "2026-06-03T08:00:00Z", None, None, "2026-06-05T08:00:00Z"),
        ("INC_032", "INC0000032", "ORG_004", "SSO session drops every 10 minutes", "access", "in_progress", "moderate", "USR_018", "GRP_016", "CI_004", "2026-06-04T09:30:00Z", None, None, "2026-06-05T09:30:00Z"),
        ("INC_033", "INC0000033", "ORG_004", "SSO login timeout from branch office", "access", "new", "moderate", "USR_019", "GRP_016", "CI_004", "2026-06-06T15:10:00Z", None, None, "2026-06-06T15:10:00Z"),
        ("INC_034", "INC0000034", "ORG_004", "SSO redirect loop on customer portal", "access", "in_progress", "high", "USR_020", "GRP_016", "CI_004", "2026-06-02T12:00:00Z", None, None, "2026-06-04T12:00:00Z"),
        ("INC_035", "INC0000035", "ORG_005", "SSO login fails after password change", "access", "in_progress", "high", "USR_023", "GRP_021", None, "2026-06-03T10:00:00Z", None, None, "2026-06-05T10:00:00Z"),
        ("INC_036", "INC0000214", "ORG_006", "Printer on floor 3 jams on duplex", "hardware", "new", "low", "USR_027", "GRP_026", "CI_005", "2026-06-12T08:02:00Z", None, None, "2026-06-12T08:02:00Z"),
        ("INC_037", "INC0000215", "ORG_006", "Printer on floor 3 jams on duplex", "hardware", "new", "low", "USR_027", "GRP_026", "CI_005", "2026-06-12T08:06:00Z", None, None, "2026-06-12T08:06:00Z"),
        ("INC_038", "INC0000216", "ORG_006", "Printer on floor 3 jams on duplex", "hardware", "resolved", "low", "USR_028", "GRP_026", "CI_005", "2026-03-02T10:15:00Z", "2026-03-03T09:00:00Z", None, "2026-03-03T09:00:00Z"),
    ])  # fmt: skip
    insert(conn, "incident_slas", "incident_sla_id, incident_id, sla_id, stage, started_at, due_at", [
        ("TSLA_001", "INC_021", "SLA_003", "completed", "2026-06-02T07:40:00Z", "2026-06-02T11:40:00Z"),
        ("TSLA_002", "INC_021", "SLA_004", "breached", "2026-06-02T07:40:00Z", "2026-06-03T07:40:00Z"),
        ("TSLA_003", "INC_036", "SLA_007", "in_progress", "2026-06-12T08:02:00Z", "2026-06-13T08:02:00Z"),
        ("TSLA_004", "INC_037", "SLA_007", "in_progress", "2026-06-12T08:06:00Z", "2026-06-13T08:06:00Z"),
    ])  # fmt: skip
    insert(conn, "problems",
           "problem_id, number, org_id, title, status, priority, assignment_group_id, opened_at, updated_at", [
        ("PRB_004", "PRB0000004", "ORG_004", "Intermittent SSO login failures", "new", "high", "GRP_016", "2026-06-05T09:00:00Z", "2026-06-05T09:00:00Z"),
        ("PRB_009", "PRB0000009", "ORG_004", "Intermittent SSO login failures (root cause)", "root_cause_analysis", "high", "GRP_016", "2026-06-03T09:00:00Z", "2026-06-06T09:00:00Z"),
        ("PRB_010", "PRB0000010", "ORG_005", "Intermittent SSO login failures", "new", "high", "GRP_021", "2026-06-04T09:00:00Z", "2026-06-04T09:00:00Z"),
    ])  # fmt: skip
    insert(conn, "problem_incidents", "problem_id, incident_id, linked_at", [
        ("PRB_004", "INC_031", "2026-06-05T09:05:00Z"),
        ("PRB_004", "INC_032", "2026-06-05T09:06:00Z"),
        ("PRB_004", "INC_033", "2026-06-06T15:30:00Z"),
        ("PRB_009", "INC_034", "2026-06-03T09:10:00Z"),
        ("PRB_010", "INC_035", "2026-06-04T09:10:00Z"),
    ])  # fmt: skip
    cols = ("change_id, number, org_id, title, change_type, status, risk, cab_required, "
            "requested_by, assignment_group_id, ci_id, planned_start, planned_end, updated_at")  # fmt: skip
    insert(conn, "changes", cols, [
        ("CHG_002", "CHG0000002", "ORG_001", "Customer portal upgrade", "normal", "authorize", "high", 1, "USR_002", "GRP_001", None, "2026-06-22T22:00:00Z", "2026-06-23T02:00:00Z", "2026-06-10T09:00:00Z"),
        ("CHG_005", "CHG0000005", "ORG_001", "Customer portal TLS certificate renewal", "normal", "authorize", "moderate", 1, "USR_002", "GRP_001", None, "2026-06-18T22:00:00Z", "2026-06-18T23:00:00Z", "2026-06-10T09:00:00Z"),
        ("CHG_007", "CHG0000007", "ORG_001", "Email gateway maintenance window", "standard", "scheduled", "low", 0, "USR_004", "GRP_004", "CI_001", "2026-06-20T22:00:00Z", "2026-06-21T01:00:00Z", "2026-06-11T09:00:00Z"),
        ("CHG_008", "CHG0000070", "ORG_002", "Email gateway maintenance window", "standard", "scheduled", "low", 0, "USR_009", "GRP_009", "CI_002", "2026-06-20T22:00:00Z", "2026-06-21T01:00:00Z", "2026-06-11T09:00:00Z"),
        ("CHG_010", "CHG0000010", "ORG_006", "Rotate backup encryption keys", "standard", "authorize", "low", 0, "USR_026", "GRP_028", None, "2026-06-24T20:00:00Z", "2026-06-24T21:00:00Z", "2026-06-12T09:00:00Z"),
        ("CHG_011", "CHG0000011", "ORG_006", "Upgrade ERP database to v14", "normal", "authorize", "high", 1, "USR_027", "GRP_028", None, "2026-06-27T20:00:00Z", "2026-06-28T04:00:00Z", "2026-06-12T09:00:00Z"),
        ("CHG_012", "CHG0000012", "ORG_006", "Migrate file shares to new NAS", "normal", "authorize", "high", 1, "USR_027", "GRP_026", None, "2026-06-26T20:00:00Z", "2026-06-27T06:00:00Z", "2026-06-12T09:00:00Z"),
        ("CHG_013", "CHG0000013", "ORG_006", "Firewall rule clean-up", "normal", "authorize", "moderate", 1, "USR_026", "GRP_027", None, "2026-06-25T20:00:00Z", "2026-06-25T22:00:00Z", "2026-06-12T09:00:00Z"),
        ("CHG_014", "CHG0000014", "ORG_007", "Rotate backup encryption keys", "standard", "authorize", "low", 0, "USR_031", "GRP_033", None, "2026-06-24T20:00:00Z", "2026-06-24T21:00:00Z", "2026-06-12T09:00:00Z"),
    ])  # fmt: skip
    insert(conn, "cab_approvals", "change_id, approver_id, decision, decided_at", [
        ("CHG_002", "USR_003", "pending", None),
        ("CHG_005", "USR_003", "approved", "2026-06-10T14:00:00Z"),
        ("CHG_005", "USR_005", "approved", "2026-06-10T15:30:00Z"),
        ("CHG_011", "USR_029", "approved", "2026-06-12T16:00:00Z"),
        ("CHG_012", "USR_029", "approved", "2026-06-12T16:05:00Z"),
        ("CHG_012", "USR_030", "rejected", "2026-06-13T10:00:00Z"),
    ])  # fmt: skip
    subject = "Maintenance: email gateway 2026-06-20 22:00 UTC"
    insert(conn, "notifications",
           "notification_id, org_id, incident_id, change_id, recipient_id, subject, status, created_at, sent_at", [
        ("NTF_001", "ORG_001", None, "CHG_007", "USR_001", subject, "queued", "2026-06-11T09:05:00Z", None),
        ("NTF_002", "ORG_001", None, "CHG_007", "USR_002", subject, "queued", "2026-06-11T09:05:00Z", None),
        ("NTF_003", "ORG_001", None, "CHG_007", "USR_003", subject, "queued", "2026-06-11T09:05:00Z", None),
        ("NTF_004", "ORG_002", None, "CHG_008", "USR_006", subject, "queued", "2026-06-11T09:07:00Z", None),
        ("NTF_005", "ORG_002", None, "CHG_008", "USR_007", subject, "queued", "2026-06-11T09:07:00Z", None),
        ("NTF_006", "ORG_001", None, "CHG_007", "USR_004", "Heads-up: email gateway maintenance planned", "sent", "2026-06-01T08:00:00Z", "2026-06-01T08:00:30Z"),
    ])  # fmt: skip


def insert_csm(conn: sqlite3.Connection) -> None:
    """Contacts, contracts, entitlements, installed base, cases, interactions, articles."""
    stamp = "2026-06-01T10:00:00Z"
    insert(conn, "contacts", "contact_id, account_id, name, email, role, active, updated_at", [
        ("CON_001", "ACC_001", "Dana Whitfield", "dana.whitfield@acme.com", "billing", 1, stamp),
        ("CON_002", "ACC_001", "Priya Raman", "priya.raman@acme.com", "billing", 1, stamp),
        ("CON_003", "ACC_001", "Tom Becker", "tom.becker@acme.com", "technical", 1, stamp),
        ("CON_004", "ACC_003", "Luc Martin", "luc.martin@acme.eu", "billing", 1, stamp),
        ("CON_005", "ACC_002", "Jo Park", "jo.park@acmecorp.com", "billing", 1, stamp),
        ("CON_006", "ACC_001", "Sam Ortiz", "sam.ortiz@acme.com", "billing", 0, stamp),
        ("CON_007", "ACC_006", "Hank Scorpio", "hank.scorpio@globex.com", "executive", 1, stamp),
        ("CON_008", "ACC_008", "Bill Lumbergh", "bill.lumbergh@initech.com", "admin", 1, stamp),
    ])  # fmt: skip
    insert(conn, "contracts",
           "contract_id, number, account_id, contract_type, status, start_date, end_date, price, updated_at", [
        ("CTR_001", "CNTR0000101", "ACC_001", "support", "active", "2025-09-18", "2027-04-05", 16823.00, stamp),
        ("CTR_002", "CNTR0000102", "ACC_001", "support", "expired", "2024-03-01", "2025-08-31", 8388.00, stamp),
        ("CTR_003", "CNTR0000103", "ACC_002", "support", "active", "2025-11-01", "2026-10-31", 15200.00, stamp),
        ("CTR_004", "CNTR0000104", "ACC_008", "subscription", "active", "2026-01-01", "2026-12-31", 24000.00, stamp),
        ("CTR_005", "CNTR0000105", "ACC_008", "subscription", "expired", "2025-01-01", "2025-12-31", 9600.00, stamp),
        ("CTR_006", "CNTR0000106", "ACC_009", "subscription", "active", "2026-02-01", "2027-01-31", 12000.00, stamp),
    ])  # fmt: skip
    insert(conn, "entitlements",
           "entitlement_id, contract_id, product_id, status, units, end_date, updated_at", [
        ("ENT_001", "CTR_004", "PRD_003", "active", 10, "2026-12-31", stamp),
        ("ENT_002", "CTR_005", "PRD_004", "expired", 5, "2025-12-31", stamp),
        ("ENT_003", "CTR_006", "PRD_003", "active", 20, "2027-01-31", stamp),
    ])  # fmt: skip
    insert(conn, "installed_products",
           "install_id, account_id, product_id, serial_number, status, installed_at, updated_at", [
        ("INS_001", "ACC_006", "PRD_001", "SN-4471-AX9", "retired", "2026-05-30", stamp),
        ("INS_002", "ACC_006", "PRD_001", "SN-4471-AX6", "in_use", "2026-02-11", stamp),
        ("INS_003", "ACC_007", "PRD_001", "SN-4471-AX9-R", "in_use", "2026-03-04", stamp),
        ("INS_004", "ACC_006", "PRD_003", "SN-4417-AX9", "in_use", "2025-11-20", stamp),
    ])  # fmt: skip
    insert(conn, "cases",
           "case_id, number, account_id, contact_id, product_id, subject, status, priority, team_id, opened_at, updated_at", [
        ("CS_001", "CS0000101", "ACC_004", None, "PRD_001", "Vendor RMA for failed power supply", "new", "high", "TEAM_03", "2026-06-10T08:00:00Z", stamp),
        ("CS_002", "CS0000102", "ACC_006", "CON_007", "PRD_004", "Third-party licence key not delivered", "new", "moderate", "TEAM_03", "2026-06-11T09:00:00Z", stamp),
        ("CS_003", "CS0000103", "ACC_010", None, "PRD_003", "Carrier circuit install delayed", "new", "moderate", "TEAM_03", "2026-06-12T10:00:00Z", stamp),
        ("CS_004", "CS0000104", "ACC_004", None, "PRD_001", "Vendor RMA status update", "in_progress", "high", "TEAM_03", "2026-06-02T08:00:00Z", stamp),
        ("CS_005", "CS0000105", "ACC_008", "CON_008", "PRD_003", "Vendor patch for agent crash", "in_progress", "moderate", "TEAM_03", "2026-06-04T08:00:00Z", stamp),
        ("CS_006", "CS0000106", "ACC_002", "CON_005", "PRD_005", "Vendor invoice mismatch", "resolved", "low", "TEAM_03", "2026-05-20T08:00:00Z", stamp),
        ("CS_007", "CS0000107", "ACC_006", "CON_007", "PRD_001", "Printer driver crashes after update", "in_progress", "moderate", "TEAM_01", "2026-06-09T08:00:00Z", stamp),
        ("CS_008", "CS0000108", "ACC_003", "CON_004", "PRD_001", "Vendor RMA for failed fan tray", "new", "high", "TEAM_04", "2026-06-12T11:00:00Z", stamp),
    ])  # fmt: skip
    insert(conn, "case_slas", "case_id, sla_type, stage, due_at", [
        (f"CS_00{n}", kind, "in_progress", "2026-06-20T00:00:00Z")
        for n in range(1, 9) for kind in ("response", "resolution")
    ])  # fmt: skip
    auto = "Auto-reply: ticket received"
    insert(conn, "interactions", "interaction_id, case_id, channel, direction, summary, created_at", [
        ("INT_0001", "CS_007", "email", "outbound", auto, "2026-06-09T08:00:05Z"),
        ("INT_0002", "CS_007", "email", "outbound", auto, "2026-06-09T08:00:06Z"),
        ("INT_0003", "CS_007", "email", "outbound", auto, "2026-06-09T08:00:07Z"),
        ("INT_0004", "CS_007", "email", "inbound", "Customer: crash log attached", "2026-06-09T08:20:00Z"),
        ("INT_0005", "CS_007", "phone", "outbound", "Called customer, scheduled remote session", "2026-06-09T10:00:00Z"),
        ("INT_0006", "CS_007", "portal", "inbound", "Customer uploaded screenshots", "2026-06-09T10:40:00Z"),
    ])  # fmt: skip
    insert(conn, "knowledge_articles",
           "article_id, number, title, product_id, status, legal_review_required, legal_reviewed_by, updated_at", [
        ("KB_001", "KB0001001", "Resetting Helix agent credentials", "PRD_003", "review", 0, None, stamp),
        ("KB_002", "KB0001002", "Data retention for Helix Backup exports", "PRD_004", "review", 1, None, stamp),
        ("KB_003", "KB0001003", "Resetting Helix agent credentials (legacy)", "PRD_003", "retired", 0, None, stamp),
    ])  # fmt: skip
