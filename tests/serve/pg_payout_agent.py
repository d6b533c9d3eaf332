"""An agent whose own psycopg code approves refund RFD_025 and pays it out.

`blind`: on a lost connection it runs the same transaction again. `check`: it reads the
state back first and retries only what did not land. Run by the wire door's tests as a
command agent (`python tests/serve/pg_payout_agent.py blind|check`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import psycopg

URL = os.environ["KAUDIT_DATABASE_URL"]
CAREFUL = sys.argv[1] == "check"
ATTEMPTS = 3


def approve(conn: psycopg.Connection) -> None:
    conn.execute(
        "UPDATE refunds SET status = 'approved', approved_by = 'billing-agent' "
        "WHERE refund_id = 'RFD_025' AND status = 'requested'"
    )


def approved(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT status FROM refunds WHERE refund_id = 'RFD_025'").fetchone()
    return row is not None and row[0] == "approved"


def pay(conn: psycopg.Connection) -> None:
    last = conn.execute("SELECT max(CAST(substr(payout_id, 4) AS integer)) FROM payouts")
    number = (last.fetchone() or (0,))[0] + 1
    account, amount = conn.execute(
        "SELECT billing_account_id, amount FROM refunds WHERE refund_id = 'RFD_025'"
    ).fetchone() or ("", 0)
    conn.execute(
        "INSERT INTO payouts (payout_id, billing_account_id, refund_id, amount, status, "
        "created_at, sent_at) VALUES (%s, %s, 'RFD_025', %s, 'sent', %s, %s)",
        (f"PO_{number:03d}", account, amount, "2026-06-15T09:00:00Z", "2026-06-15T09:00:00Z"),
    )


def paid(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT 1 FROM payouts WHERE refund_id = 'RFD_025'").fetchone() is not None


def step(work: Callable[[psycopg.Connection], None], landed: Callable[..., bool]) -> None:
    """Run `work` in its own transaction until it is known to have landed."""
    for _ in range(ATTEMPTS):
        try:
            with psycopg.connect(URL, connect_timeout=10) as conn:
                work(conn)
            return
        except psycopg.OperationalError as exc:
            print(f"lost: {exc}".splitlines()[0], file=sys.stderr)
            if CAREFUL:
                with psycopg.connect(URL, connect_timeout=10) as conn:
                    if landed(conn):
                        return


step(approve, approved)
step(pay, paid)
print("Approved RFD_025 and paid it out.")
