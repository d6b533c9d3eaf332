"""Hand-placed scenario records that built-in tasks refer to by id.

The base records (organizations, accounts, products, teams, SLA definitions) live here;
the scenario rows live in `scenarios/<table>.csv`, one row a line, an empty cell for
NULL, loaded with the column types the schema declares. They are inserted before the
random background, so their ids are low and stable, and the background never attaches
children to them (no random incident joins a curated problem, no random case lands in
a curated queue): a task's trap stays exactly the size its rationale says. Look-alikes
(same title in another organization, serials one character apart, a legal hold that
was released, a frozen sibling account) are part of the scenarios on purpose.
"""

from __future__ import annotations

import csv
import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
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

SCENARIO_DIR = Path(__file__).parent / "scenarios"

SCENARIO_TABLES = (
    "configuration_items",
    "incidents",
    "problems",
    "problem_incidents",
    "changes",
    "cab_approvals",
    "incident_slas",
    "notifications",
    "contacts",
    "contracts",
    "entitlements",
    "installed_products",
    "cases",
    "case_slas",
    "interactions",
    "knowledge_articles",
    "billing_accounts",
    "legal_holds",
    "billing_settings",
    "invoices",
    "invoice_lines",
    "payments",
    "refunds",
    "refund_approvals",
    "credits",
    "payouts",
)
"""Scenario files in foreign-key order (parents before children)."""


def scenario_digest() -> str:
    """sha256 over every scenario file, so editing one rebuilds the cached template."""
    digest = hashlib.sha256()
    for table in SCENARIO_TABLES:
        digest.update((SCENARIO_DIR / f"{table}.csv").read_bytes())
    return digest.hexdigest()


def insert(
    conn: sqlite3.Connection, table: str, columns: str, rows: Sequence[Sequence[Any]]
) -> None:
    """Insert `rows` into `table`; `columns` is a comma-separated list from this package."""
    marks = ", ".join("?" for _ in columns.split(","))
    conn.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def insert_scenarios(conn: sqlite3.Connection) -> None:
    """Load every scenario CSV into its table, typed by the declared column types."""
    for table in SCENARIO_TABLES:
        declared = {row[1]: row[2] for row in conn.execute(f"PRAGMA table_info({table})")}
        with (SCENARIO_DIR / f"{table}.csv").open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            columns = next(reader)
            rows = [
                tuple(
                    _typed(cell, declared[column])
                    for column, cell in zip(columns, row, strict=True)
                )
                for row in reader
            ]
        insert(conn, table, ", ".join(columns), rows)


def _typed(cell: str, declared: str) -> Any:
    if cell == "":
        return None
    if declared == "INTEGER":
        return int(cell)
    if declared == "REAL":
        return float(cell)
    return cell
