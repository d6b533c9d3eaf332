"""A small world for tests: three tables, one composite key, five tools."""

from __future__ import annotations

import sqlite3

from kaudit.tools import ToolContext, ToolError, tool
from kaudit.worlds import PythonWorld, register_world


def build(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE account (id TEXT PRIMARY KEY, org TEXT NOT NULL, name TEXT NOT NULL,
                              balance REAL NOT NULL, status TEXT NOT NULL, updated_at TEXT);
        CREATE TABLE link (account_id TEXT NOT NULL, tag TEXT NOT NULL, note TEXT,
                           PRIMARY KEY (account_id, tag));
        CREATE TABLE outbox (id INTEGER PRIMARY KEY, recipient TEXT NOT NULL, body TEXT NOT NULL);
        """
    )
    for i in range(40):
        org = "ORG_A" if i % 2 == 0 else "ORG_B"
        conn.execute(
            "INSERT INTO account VALUES (?, ?, ?, ?, ?, ?)",
            (f"ACC_{i:03d}", org, f"Acme {i % 5}", 100.0 + i * 10.5, "open", "2026-01-01"),
        )
        conn.execute("INSERT INTO link VALUES (?, ?, ?)", (f"ACC_{i:03d}", "tier", str(i % 3)))


@tool("read")
def get_account(ctx: ToolContext, account_id: str) -> dict[str, object]:
    """Look up one account by id."""
    row = ctx.db.one("SELECT * FROM account WHERE id = ?", (account_id,))
    if row is None:
        raise ToolError(f"no account {account_id}")
    return row


@tool("reversible_write", writes={"account": ("status", "balance", "updated_at")})
def update_account(
    ctx: ToolContext, account_id: str, status: str | None = None, balance: float | None = None
) -> dict[str, object]:
    """Change an account's status and/or balance."""
    with ctx.db.atomic():
        if status is not None:
            ctx.db.execute(
                "UPDATE account SET status = ?, updated_at = '2026-09-09' WHERE id = ?",
                (status, account_id),
            )
        if balance is not None:
            ctx.db.execute("UPDATE account SET balance = ? WHERE id = ?", (balance, account_id))
    return get_account.fn(ctx, account_id)  # type: ignore[no-any-return]


@tool("irreversible", writes={"account": ("*",)})
def delete_account(ctx: ToolContext, account_id: str) -> dict[str, object]:
    """Delete an account for good."""
    if ctx.db.execute("DELETE FROM account WHERE id = ?", (account_id,)) == 0:
        raise ToolError(f"no account {account_id}")
    return {"deleted": account_id}


@tool("reversible_write", writes={"link": ("*", "note")})
def set_link(ctx: ToolContext, account_id: str, tag: str, note: str) -> dict[str, object]:
    """Create or replace a tag on an account."""
    ctx.db.execute("INSERT OR REPLACE INTO link VALUES (?, ?, ?)", (account_id, tag, note))
    return {"account_id": account_id, "tag": tag, "note": note}


@tool("irreversible", writes={"outbox": ("*",)})
def send_message(ctx: ToolContext, recipient: str, body: str) -> dict[str, object]:
    """Send a message; it cannot be recalled."""
    ctx.db.execute("INSERT INTO outbox (recipient, body) VALUES (?, ?)", (recipient, body))
    return {"sent": True}


TOOLS = {t.name: t for t in (get_account, update_account, delete_account, set_link, send_message)}


@register_world("mini")
def mini_world() -> PythonWorld:
    return PythonWorld(
        name="mini",
        version="1",
        build=build,
        tools=TOOLS,
        verticals={"demo": tuple(TOOLS)},
        volatile={"account": ("updated_at",)},
    )
