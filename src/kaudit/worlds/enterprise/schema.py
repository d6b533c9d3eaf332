"""DDL of the enterprise world, one script per vertical.

Every table declares a real primary key (the labeler matches rows by it); link tables
use composite keys. Money is REAL dollars rounded to cents, so a damage spec's
`dollars_from` reads a column as dollars with no unit conversion. Foreign keys that a
hard delete cascades through are declared `ON DELETE CASCADE`, which is what makes
deletes order-sensitive: children vanish with their parent.
"""

from __future__ import annotations

import sqlite3

ITSM_DDL = """
CREATE TABLE organizations (
    org_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    domain TEXT NOT NULL,
    region TEXT NOT NULL
);
CREATE TABLE users (
    user_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    title TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE assignment_groups (
    group_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    name TEXT NOT NULL
);
CREATE TABLE group_members (
    group_id TEXT NOT NULL REFERENCES assignment_groups(group_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE TABLE configuration_items (
    ci_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    name TEXT NOT NULL,
    ci_class TEXT NOT NULL,
    status TEXT NOT NULL,
    monthly_cost REAL NOT NULL,
    owner_group_id TEXT REFERENCES assignment_groups(group_id),
    updated_at TEXT NOT NULL
);
CREATE TABLE incidents (
    incident_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    title TEXT NOT NULL,
    category TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    caller_id TEXT REFERENCES users(user_id),
    assignment_group_id TEXT REFERENCES assignment_groups(group_id),
    assigned_to TEXT REFERENCES users(user_id),
    ci_id TEXT REFERENCES configuration_items(ci_id) ON DELETE SET NULL,
    opened_at TEXT NOT NULL,
    resolved_at TEXT,
    closed_at TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE problems (
    problem_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    assignment_group_id TEXT REFERENCES assignment_groups(group_id),
    opened_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE problem_incidents (
    problem_id TEXT NOT NULL REFERENCES problems(problem_id) ON DELETE CASCADE,
    incident_id TEXT NOT NULL REFERENCES incidents(incident_id) ON DELETE CASCADE,
    linked_at TEXT NOT NULL,
    PRIMARY KEY (problem_id, incident_id)
);
CREATE TABLE changes (
    change_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    title TEXT NOT NULL,
    change_type TEXT NOT NULL,
    status TEXT NOT NULL,
    risk TEXT NOT NULL,
    cab_required INTEGER NOT NULL,
    requested_by TEXT REFERENCES users(user_id),
    assignment_group_id TEXT REFERENCES assignment_groups(group_id),
    ci_id TEXT REFERENCES configuration_items(ci_id) ON DELETE SET NULL,
    planned_start TEXT NOT NULL,
    planned_end TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE cab_approvals (
    change_id TEXT NOT NULL REFERENCES changes(change_id) ON DELETE CASCADE,
    approver_id TEXT NOT NULL REFERENCES users(user_id),
    decision TEXT NOT NULL,
    decided_at TEXT,
    PRIMARY KEY (change_id, approver_id)
);
CREATE TABLE sla_definitions (
    sla_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    priority TEXT NOT NULL,
    target_hours INTEGER NOT NULL
);
CREATE TABLE incident_slas (
    incident_sla_id TEXT PRIMARY KEY,
    incident_id TEXT NOT NULL REFERENCES incidents(incident_id) ON DELETE CASCADE,
    sla_id TEXT NOT NULL REFERENCES sla_definitions(sla_id),
    stage TEXT NOT NULL,
    started_at TEXT NOT NULL,
    due_at TEXT NOT NULL
);
CREATE TABLE notifications (
    notification_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(org_id),
    incident_id TEXT REFERENCES incidents(incident_id) ON DELETE CASCADE,
    change_id TEXT REFERENCES changes(change_id) ON DELETE CASCADE,
    recipient_id TEXT NOT NULL REFERENCES users(user_id),
    subject TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
"""

CSM_DDL = """
CREATE TABLE accounts (
    account_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    industry TEXT NOT NULL,
    region TEXT NOT NULL,
    tier TEXT NOT NULL,
    status TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE contacts (
    contact_id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(account_id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
);
CREATE TABLE products (
    product_id TEXT PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    family TEXT NOT NULL,
    list_price REAL NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
);
CREATE TABLE support_teams (
    team_id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE contracts (
    contract_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(account_id),
    contract_type TEXT NOT NULL,
    status TEXT NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    price REAL NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE entitlements (
    entitlement_id TEXT PRIMARY KEY,
    contract_id TEXT NOT NULL REFERENCES contracts(contract_id) ON DELETE CASCADE,
    product_id TEXT NOT NULL REFERENCES products(product_id),
    status TEXT NOT NULL,
    units INTEGER NOT NULL,
    end_date TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE installed_products (
    install_id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(account_id),
    product_id TEXT NOT NULL REFERENCES products(product_id),
    serial_number TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    installed_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE cases (
    case_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(account_id),
    contact_id TEXT REFERENCES contacts(contact_id),
    product_id TEXT REFERENCES products(product_id),
    subject TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    team_id TEXT REFERENCES support_teams(team_id),
    opened_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE case_slas (
    case_id TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
    sla_type TEXT NOT NULL,
    stage TEXT NOT NULL,
    due_at TEXT NOT NULL,
    PRIMARY KEY (case_id, sla_type)
);
CREATE TABLE interactions (
    interaction_id TEXT PRIMARY KEY,
    case_id TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    direction TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE knowledge_articles (
    article_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    product_id TEXT REFERENCES products(product_id),
    status TEXT NOT NULL,
    legal_review_required INTEGER NOT NULL DEFAULT 0,
    legal_reviewed_by TEXT,
    updated_at TEXT NOT NULL
);
"""

BILLING_DDL = """
CREATE TABLE billing_accounts (
    billing_account_id TEXT PRIMARY KEY,
    account_id TEXT REFERENCES accounts(account_id),
    name TEXT NOT NULL,
    currency TEXT NOT NULL DEFAULT 'USD',
    status TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE legal_holds (
    hold_id TEXT PRIMARY KEY,
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    reason TEXT NOT NULL,
    placed_at TEXT NOT NULL,
    released_at TEXT
);
CREATE TABLE billing_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE invoices (
    invoice_id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    status TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    due_at TEXT NOT NULL,
    total REAL NOT NULL,
    balance REAL NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE invoice_lines (
    invoice_id TEXT NOT NULL REFERENCES invoices(invoice_id) ON DELETE CASCADE,
    line_no INTEGER NOT NULL,
    product_id TEXT REFERENCES products(product_id),
    description TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    amount REAL NOT NULL,
    PRIMARY KEY (invoice_id, line_no)
);
CREATE TABLE payments (
    payment_id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(invoice_id),
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    amount REAL NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    received_at TEXT NOT NULL
);
CREATE TABLE refunds (
    refund_id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL REFERENCES payments(payment_id),
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    approved_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE refund_approvals (
    refund_id TEXT NOT NULL REFERENCES refunds(refund_id) ON DELETE CASCADE,
    approver TEXT NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (refund_id, approver)
);
CREATE TABLE credits (
    credit_id TEXT PRIMARY KEY,
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    invoice_id TEXT REFERENCES invoices(invoice_id),
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE payouts (
    payout_id TEXT PRIMARY KEY,
    billing_account_id TEXT NOT NULL REFERENCES billing_accounts(billing_account_id),
    refund_id TEXT REFERENCES refunds(refund_id),
    amount REAL NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
"""

DDL_BY_VERTICAL: dict[str, str] = {"itsm": ITSM_DDL, "csm": CSM_DDL, "billing": BILLING_DDL}
"""Billing refers to csm accounts and products, so verticals are created in this order."""

VOLATILE: dict[str, tuple[str, ...]] = {
    table: ("updated_at",)
    for table in (
        "configuration_items",
        "incidents",
        "problems",
        "changes",
        "accounts",
        "contacts",
        "products",
        "contracts",
        "entitlements",
        "installed_products",
        "cases",
        "knowledge_articles",
        "billing_accounts",
        "invoices",
        "refunds",
        "credits",
    )
}
"""Bookkeeping timestamps the write tools bump; masked so a touch alone is not a change."""


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every table of every vertical on an empty database."""
    for ddl in DDL_BY_VERTICAL.values():
        conn.executescript(ddl)
