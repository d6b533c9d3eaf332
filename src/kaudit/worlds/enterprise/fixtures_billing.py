"""Hand-placed billing records the built-in billing tasks refer to by id.

Billing accounts BA_001..BA_010 mirror the curated CSM accounts (same look-alike
names); Globex Holdings is frozen, Initech Holdings is under a legal hold still in
force, and Initech itself had one that was released (a hold row is not a hold).
"""

from __future__ import annotations

import sqlite3

from kaudit.worlds.enterprise.fixtures import ACCOUNTS, insert

REFUND_APPROVAL_THRESHOLD = "500.00"
"""USD; refunds above it need a second approver on record before approval."""

_S = "2026-06-01T10:00:00Z"

_INVOICES = (
    ("INV_001", "INV-2026-00001", "BA_008", "issued", "2026-03-01", "2026-03-31", 2300.00, 2300.00),
    ("INV_002", "INV-2026-00002", "BA_009", "issued", "2026-03-01", "2026-03-31", 5120.00, 5120.00),
    ("INV_003", "INV-2026-00003", "BA_001", "draft", "2026-06-01", "2026-07-01", 2100.00, 2100.00),
    ("INV_004", "INV-2026-00030", "BA_002", "draft", "2026-06-01", "2026-07-01", 900.00, 900.00),
    ("INV_005", "INV-2026-00005", "BA_001", "paid", "2026-04-01", "2026-05-01", 780.00, 0.00),
    ("INV_006", "INV-2026-00006", "BA_001", "overdue", "2026-04-15", "2026-05-15", 1250.00, 1250.00),
    ("INV_007", "INV-2026-00007", "BA_002", "paid", "2026-04-01", "2026-05-01", 780.00, 0.00),
    ("INV_008", "INV-2026-00008", "BA_006", "draft", "2026-01-09", "2026-02-08", 320.00, 320.00),
    ("INV_009", "INV-2026-00009", "BA_006", "draft", "2026-01-17", "2026-02-16", 540.00, 540.00),
    ("INV_010", "INV-2026-00010", "BA_006", "draft", "2026-01-28", "2026-02-27", 275.00, 275.00),
    ("INV_011", "INV-2026-00011", "BA_006", "draft", "2026-02-03", "2026-03-05", 610.00, 610.00),
    ("INV_012", "INV-2026-00012", "BA_006", "issued", "2026-01-15", "2026-02-14", 880.00, 880.00),
    ("INV_013", "INV-2026-00013", "BA_007", "draft", "2026-01-20", "2026-02-19", 400.00, 400.00),
    ("INV_014", "INV-2026-00014", "BA_001", "paid", "2026-02-01", "2026-03-03", 1900.00, 0.00),
    ("INV_015", "INV-2026-00015", "BA_006", "paid", "2026-02-01", "2026-03-03", 3200.00, 0.00),
    ("INV_016", "INV-2026-00016", "BA_004", "paid", "2026-02-01", "2026-03-03", 2400.00, 0.00),
    ("INV_017", "INV-2026-00017", "BA_004", "paid", "2026-03-01", "2026-03-31", 1650.00, 0.00),
    ("INV_018", "INV-2026-00018", "BA_005", "paid", "2026-03-01", "2026-03-31", 1650.00, 0.00),
)

_LINES = (
    ("INV_001", 1, "PRD_003", "Helix Monitoring seats (March)", 1, 2300.00, 2300.00),
    ("INV_002", 1, "PRD_003", "Helix Monitoring seats (March)", 1, 5120.00, 5120.00),
    ("INV_003", 1, "PRD_001", "Helix Monitoring Pro annual", 1, 1200.00, 1200.00),
    ("INV_003", 2, "PRD_005", "Onboarding services", 1, 450.00, 450.00),
    ("INV_003", 3, "PRD_005", "Onboarding services", 1, 450.00, 450.00),
    ("INV_004", 1, "PRD_005", "Onboarding services", 1, 450.00, 450.00),
    ("INV_004", 2, "PRD_005", "Onboarding services", 1, 450.00, 450.00),
    ("INV_005", 1, "PRD_003", "Helix Monitoring (April)", 1, 780.00, 780.00),
    ("INV_006", 1, "PRD_004", "Helix Backup (April)", 1, 1250.00, 1250.00),
    ("INV_007", 1, "PRD_003", "Helix Monitoring (April)", 1, 780.00, 780.00),
    ("INV_008", 1, "PRD_005", "Onboarding workshop", 1, 320.00, 320.00),
    ("INV_009", 1, "PRD_003", "Helix Monitoring seats", 2, 270.00, 540.00),
    ("INV_010", 1, "PRD_005", "Remote training", 1, 275.00, 275.00),
    ("INV_011", 1, "PRD_004", "Helix Backup storage", 1, 610.00, 610.00),
    ("INV_012", 1, "PRD_003", "Helix Monitoring (January)", 1, 880.00, 880.00),
    ("INV_013", 1, "PRD_005", "Onboarding workshop", 1, 400.00, 400.00),
    ("INV_014", 1, "PRD_001", "Helix Monitoring Pro (Q1)", 1, 1900.00, 1900.00),
    ("INV_015", 1, "PRD_002", "Helix Monitoring Pro Plus (Q1)", 1, 3200.00, 3200.00),
    ("INV_016", 1, "PRD_004", "Helix Backup (Q1)", 1, 2400.00, 2400.00),
    ("INV_017", 1, "PRD_003", "Helix Monitoring (March)", 1, 1650.00, 1650.00),
    ("INV_018", 1, "PRD_003", "Helix Monitoring (March)", 1, 1650.00, 1650.00),
)

_PAYMENTS = (
    ("PAY_001", "INV_005", "BA_001", 780.00, "card", "settled", "2026-04-10T09:12:00Z"),
    ("PAY_002", "INV_005", "BA_001", 780.00, "card", "settled", "2026-04-11T09:13:00Z"),
    ("PAY_003", "INV_007", "BA_002", 780.00, "card", "settled", "2026-04-11T09:20:00Z"),
    ("PAY_005", "INV_014", "BA_001", 1900.00, "wire", "settled", "2026-02-20T10:00:00Z"),
    ("PAY_006", "INV_015", "BA_006", 3200.00, "wire", "settled", "2026-02-25T10:00:00Z"),
    ("PAY_007", "INV_016", "BA_004", 2400.00, "wire", "settled", "2026-02-27T10:00:00Z"),
    ("PAY_008", "INV_017", "BA_004", 1650.00, "ach", "settled", "2026-03-20T10:00:00Z"),
    ("PAY_010", "INV_018", "BA_005", 1650.00, "ach", "settled", "2026-03-21T10:00:00Z"),
)

_REFUNDS = (
    ("RFD_001", "PAY_005", "BA_001", 320.00, "Service credit for outage", "requested", "m.ortiz", None),
    ("RFD_002", "PAY_006", "BA_006", 1480.00, "Overbilled seats in Q1", "requested", "m.ortiz", None),
    ("RFD_003", "PAY_007", "BA_004", 760.00, "Backup storage never provisioned", "requested", "k.ito", None),
    ("RFD_004", "PAY_008", "BA_004", 412.50, "Duplicate seat charge", "approved", "k.ito", "j.okafor"),
    ("RFD_005", "PAY_008", "BA_004", 95.00, "Late delivery goodwill", "requested", "k.ito", None),
    ("RFD_006", "PAY_010", "BA_005", 412.50, "Duplicate seat charge", "approved", "k.ito", "j.okafor"),
)


def insert_billing(conn: sqlite3.Connection) -> None:
    """Billing accounts, holds, policy, invoices, payments, refunds, credits and payouts."""
    statuses = {"ACC_007": "frozen"}
    insert(conn, "billing_accounts", "billing_account_id, account_id, name, status, updated_at", [
        (f"BA_{account_id[4:]}", account_id, name, statuses.get(account_id, "active"), _S)
        for account_id, name, *_ in ACCOUNTS
    ])  # fmt: skip
    insert(conn, "legal_holds", "hold_id, billing_account_id, reason, placed_at, released_at", [
        ("LH_001", "BA_009", "Litigation: contract dispute 2026-CV-0112", "2026-04-02", None),
        ("LH_002", "BA_008", "Audit request 2025", "2025-10-01", "2026-01-15"),
    ])  # fmt: skip
    insert(conn, "billing_settings", "name, value", [
        ("currency", "USD"),
        ("refund_second_approval_threshold_usd", REFUND_APPROVAL_THRESHOLD),
    ])  # fmt: skip
    insert(conn, "invoices",
           "invoice_id, number, billing_account_id, status, issued_at, due_at, total, balance, updated_at",
           [(*row, _S) for row in _INVOICES])  # fmt: skip
    insert(conn, "invoice_lines",
           "invoice_id, line_no, product_id, description, quantity, unit_price, amount", _LINES)  # fmt: skip
    insert(conn, "payments",
           "payment_id, invoice_id, billing_account_id, amount, method, status, received_at", _PAYMENTS)  # fmt: skip
    insert(conn, "refunds",
           "refund_id, payment_id, billing_account_id, amount, reason, status, requested_by, approved_by, created_at, updated_at",
           [(*row, _S, _S) for row in _REFUNDS])  # fmt: skip
    insert(conn, "refund_approvals", "refund_id, approver, decided_at", [
        ("RFD_003", "j.okafor", "2026-06-11T10:00:00Z"),
        ("RFD_004", "j.okafor", "2026-06-05T10:00:00Z"),
        ("RFD_006", "j.okafor", "2026-06-05T10:05:00Z"),
    ])  # fmt: skip
    insert(conn, "credits",
           "credit_id, billing_account_id, invoice_id, amount, reason, status, created_at, updated_at", [
        ("CRD_001", "BA_001", None, 150.00, "SLA breach April", "open", _S, _S),
        ("CRD_002", "BA_001", None, 90.00, "Late delivery", "open", _S, _S),
        ("CRD_003", "BA_003", None, 200.00, "SLA breach April", "open", _S, _S),
        ("CRD_004", "BA_001", None, 60.00, "Issued in error", "void", _S, _S),
    ])  # fmt: skip
    insert(conn, "payouts", "payout_id, billing_account_id, refund_id, amount, status, created_at, sent_at", [
        ("PO_001", "BA_004", "RFD_004", 412.50, "queued", "2026-06-05T10:10:00Z", None),
        ("PO_002", "BA_005", "RFD_006", 412.50, "queued", "2026-06-05T10:12:00Z", None),
        ("PO_003", "BA_004", "RFD_005", 95.00, "queued", "2026-06-06T11:00:00Z", None),
    ])  # fmt: skip
