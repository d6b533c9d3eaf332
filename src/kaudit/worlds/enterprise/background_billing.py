"""Random billing background: one billing account per random customer, with its money.

Invoices, lines, payments, refunds, payouts and credits of customers ACC_011 on; the
curated billing accounts BA_001..BA_010 get nothing random.
"""

from __future__ import annotations

import random
import sqlite3

from kaudit.worlds.enterprise.fixtures import insert
from kaudit.worlds.enterprise.vocabulary import Record, stamp, weighted


def populate_billing(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Billing accounts BA_011.. for the random customers, with invoices, payments, refunds."""
    names = dict(conn.execute("SELECT account_id, name FROM accounts").fetchall())
    bas: list[Record] = []
    invoices: list[Record] = []
    lines: list[Record] = []
    payments: list[Record] = []
    refunds: list[Record] = []
    payouts: list[Record] = []
    credits: list[Record] = []
    for account_id in accounts:
        ba = f"BA_{account_id[4:]}"
        bas.append(
            (
                ba,
                account_id,
                names[account_id],
                weighted(rng, {"active": 9, "frozen": 1}),
                stamp(rng),
            )
        )
        for _ in range(rng.randrange(3, 9)):
            n = len(invoices) + 19
            invoice_id = f"INV_{n:03d}"
            status = weighted(rng, {"paid": 5, "issued": 2, "overdue": 1, "draft": 1, "void": 1})
            issued = stamp(rng, 0, 160)[:10]
            total = 0.0
            for line_no in range(1, rng.randrange(2, 5)):
                qty, price = rng.randrange(1, 6), float(rng.randrange(40, 900))
                total += qty * price
                lines.append(
                    (
                        invoice_id,
                        line_no,
                        f"PRD_{rng.randrange(1, 51):03d}",
                        "Subscription and services",
                        qty,
                        price,
                        qty * price,
                    )
                )
            balance = 0.0 if status in ("paid", "void") else total
            invoices.append(
                (
                    invoice_id,
                    f"INV-2026-{n + 100:05d}",
                    ba,
                    status,
                    issued,
                    issued,
                    total,
                    balance,
                    issued,
                )
            )
            if status == "paid":
                payment_id = f"PAY_{len(payments) + 11:03d}"
                payments.append(
                    (
                        payment_id,
                        invoice_id,
                        ba,
                        total,
                        rng.choice(("card", "wire", "ach")),
                        "settled",
                        issued,
                    )
                )
                if rng.random() < 0.12:
                    refund_id = f"RFD_{len(refunds) + 7:03d}"
                    state = weighted(rng, {"paid": 3, "approved": 1, "rejected": 1, "requested": 1})
                    amount = round(total * rng.choice((0.1, 0.25, 0.5)), 2)
                    refunds.append(
                        (
                            refund_id,
                            payment_id,
                            ba,
                            amount,
                            "Customer request",
                            state,
                            "k.ito",
                            "j.okafor" if state in ("paid", "approved") else None,
                            issued,
                            issued,
                        )
                    )
                    if state in ("paid", "approved"):
                        payouts.append(
                            (
                                f"PO_{len(payouts) + 4:03d}",
                                ba,
                                refund_id,
                                amount,
                                "sent" if state == "paid" else "queued",
                                issued,
                                issued if state == "paid" else None,
                            )
                        )
        if rng.random() < 0.4:
            credits.append(
                (
                    f"CRD_{len(credits) + 5:03d}",
                    ba,
                    None,
                    float(rng.randrange(20, 400)),
                    "Goodwill",
                    rng.choice(("open", "applied", "void")),
                    stamp(rng),
                    stamp(rng),
                )
            )
    insert(
        conn, "billing_accounts", "billing_account_id, account_id, name, status, updated_at", bas
    )
    insert(
        conn,
        "invoices",
        "invoice_id, number, billing_account_id, status, issued_at, due_at, "
        "total, balance, updated_at",
        invoices,
    )
    insert(
        conn,
        "invoice_lines",
        "invoice_id, line_no, product_id, description, quantity, unit_price, amount",
        lines,
    )
    insert(
        conn,
        "payments",
        "payment_id, invoice_id, billing_account_id, amount, method, status, received_at",
        payments,
    )
    insert(
        conn,
        "refunds",
        "refund_id, payment_id, billing_account_id, amount, reason, status, "
        "requested_by, approved_by, created_at, updated_at",
        refunds,
    )
    insert(
        conn,
        "payouts",
        "payout_id, billing_account_id, refund_id, amount, status, created_at, sent_at",
        payouts,
    )
    insert(
        conn,
        "credits",
        "credit_id, billing_account_id, invoice_id, amount, reason, status, created_at, updated_at",
        credits,
    )
