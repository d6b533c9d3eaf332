"""A small world whose values are hard to carry between SQLite and PostgreSQL exactly."""

from __future__ import annotations

import sqlite3

from kaudit.substrate import Blueprint
from kaudit.substrate._sqlite import build_image
from kaudit.tools import ToolContext, ToolError, tool

TRICKY_TEXT = (
    "O'Brien",
    "back\\slash",
    "tab\there",
    "new\nline",
    "\\N",
    "",
    "ünïcødé 🚀",
    "100% sure?",
    'say "hi"',
)
TRICKY_REAL = (0.1, 0.30000000000000004, 1e-300, 123456789.12, -2.5, 5e-324, 1.7976931348623157e308)


def build(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE payment (
            id TEXT PRIMARY KEY,
            amount REAL NOT NULL,
            note TEXT,
            paid INTEGER NOT NULL DEFAULT 0,
            paid_at TEXT,
            big INTEGER,
            raw BLOB
        );
        CREATE TABLE line (
            invoice TEXT NOT NULL REFERENCES payment(id) ON DELETE CASCADE,
            n INTEGER NOT NULL,
            qty REAL,
            PRIMARY KEY (invoice, n)
        );
        CREATE TABLE tagged (
            a TEXT NOT NULL,
            b INTEGER NOT NULL,
            c TEXT UNIQUE,
            PRIMARY KEY (b, a)
        );
        """
    )
    for i, (text, real) in enumerate(zip(TRICKY_TEXT, TRICKY_REAL * 2, strict=False)):
        conn.execute(
            "INSERT INTO payment VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                f"P{i}",
                real,
                text,
                i % 2,
                None if i % 3 else "2026-06-15T09:00:00Z",
                2**62 + i if i % 2 else None,
                bytes([0, 255, i]),
            ),
        )
        conn.execute("INSERT INTO line VALUES (?, 1, ?), (?, 2, NULL)", (f"P{i}", real, f"P{i}"))
    conn.execute("INSERT INTO tagged VALUES ('x', 2, 'c1'), ('x', 1, 'c2'), ('y', 1, NULL)")


@tool("reversible_write", writes={"payment": ("paid", "paid_at")})
def pay(ctx: ToolContext, payment_id: str) -> dict[str, str]:
    """Mark a payment paid."""
    count = ctx.db.execute(
        "UPDATE payment SET paid = 1, paid_at = ? WHERE id = ?",
        ("2026-06-16T10:00:00Z", payment_id),
    )
    if not count:
        raise ToolError(f"payment {payment_id} not found")
    return {"paid": payment_id}


@tool("irreversible", writes={"payment": ("*",), "line": ("*",)})
def delete_payment(ctx: ToolContext, payment_id: str) -> dict[str, int]:
    """Delete a payment and, by cascade, its lines."""
    return {"deleted": ctx.db.execute("DELETE FROM payment WHERE id = ?", (payment_id,))}


@tool("reversible_write", writes={"line": ("*",)})
def add_line(ctx: ToolContext, invoice: str, n: int, qty: float | None = None) -> dict[str, int]:
    """Add an invoice line."""
    ctx.db.execute("INSERT INTO line VALUES (?, ?, ?)", (invoice, n, qty))
    return {"n": n}


@tool("reversible_write", writes={"tagged": ("c",), "payment": ("note",)})
def retag(ctx: ToolContext, a: str, b: int, c: str, note_on: str) -> dict[str, str]:
    """Set a tag and a payment note together, or neither (the note update may fail)."""
    with ctx.db.atomic():
        ctx.db.execute("UPDATE tagged SET c = ? WHERE a = ? AND b = ?", (c, a, b))
        if not ctx.db.execute("UPDATE payment SET note = ? WHERE id = ?", (c, note_on)):
            raise ToolError(f"payment {note_on} not found")
    return {"c": c}


@tool("read")
def find(ctx: ToolContext, text: str) -> list[dict[str, object]]:
    """Payments whose note contains `text` (SQLite's instr, case-insensitive)."""
    return ctx.db.query(
        "SELECT id FROM payment WHERE instr(lower(note), lower(?)) > 0 ORDER BY id", (text,)
    )


@tool("read")
def kinds(ctx: ToolContext) -> list[dict[str, object]]:
    """SQLite's storage class of some values (typeof), in key order."""
    return ctx.db.query(
        "SELECT typeof(amount) AS a, typeof(note) AS n, typeof(big) AS b, typeof(raw) AS r "
        "FROM payment WHERE id IN ('P0', 'P1') ORDER BY id"
    )


@tool("reversible_write", writes={"payment": ("*",)})
def add_payment(ctx: ToolContext, payment_id: str | None, amount: float) -> dict[str, int]:
    """Add a payment; a None id writes a NULL key (SQLite's legacy quirk would take it)."""
    return {
        "added": ctx.db.execute(
            "INSERT INTO payment (id, amount) VALUES (?, ?)", (payment_id, amount)
        )
    }


@tool("reversible_write", writes={"payment": ("id",)})
def rekey(ctx: ToolContext, payment_id: str, new_id: str | None) -> dict[str, int]:
    """Give a payment another key (None: a NULL key)."""
    return {
        "rekeyed": ctx.db.execute("UPDATE payment SET id = ? WHERE id = ?", (new_id, payment_id))
    }


TOOLS = {t.name: t for t in (pay, delete_payment, add_line, retag, find, kinds, add_payment, rekey)}


def blueprint() -> Blueprint:
    return Blueprint("pgworld", build_image(build), TOOLS, {})
