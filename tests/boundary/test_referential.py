"""The rights a write needs through its foreign keys, with SQLite's authorizer as the oracle."""

from __future__ import annotations

import sqlite3

import pytest

from kaudit.boundary._referential import (
    ForeignKey,
    Need,
    delete_needs,
    insert_needs,
    update_needs,
)

SCHEMA = """
CREATE TABLE account (id TEXT PRIMARY KEY, name TEXT);
CREATE TABLE ticket (id TEXT PRIMARY KEY,
    account_id TEXT REFERENCES account (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE reply (id TEXT PRIMARY KEY, ticket_id TEXT REFERENCES ticket (id) ON DELETE CASCADE);
CREATE TABLE note (id INTEGER PRIMARY KEY,
    account_id TEXT REFERENCES account (id) ON DELETE SET NULL);
CREATE TABLE audit (id INTEGER PRIMARY KEY, account_id TEXT REFERENCES account (id));
CREATE TABLE node (id TEXT PRIMARY KEY, parent TEXT REFERENCES node (id) ON DELETE CASCADE);
"""
_ACTIONS = {"CASCADE": "cascade", "SET NULL": "set_null", "SET DEFAULT": "set_default"}
_OPS = {
    sqlite3.SQLITE_READ: "read",
    sqlite3.SQLITE_INSERT: "insert",
    sqlite3.SQLITE_UPDATE: "update",
    sqlite3.SQLITE_DELETE: "delete",
}


def foreign_keys(conn: sqlite3.Connection) -> list[ForeignKey]:
    tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = []
    for child in tables:
        for row in conn.execute(f"PRAGMA foreign_key_list({child})"):
            _, _, parent, frm, to, on_update, on_delete, _ = row
            out.append(
                ForeignKey(
                    child,
                    (frm,),
                    parent,
                    (to,),
                    _ACTIONS.get(on_delete, "none"),
                    _ACTIONS.get(on_update, "none"),
                )
            )
    return out


def authorized(conn: sqlite3.Connection, statement: str) -> set[Need]:
    """Every (operation, table) SQLite's authorizer is asked about while compiling."""
    seen: set[Need] = set()

    def note(action: int, table: str | None, *_: object) -> int:
        if action in _OPS and table is not None:
            seen.add((_OPS[action], table))  # type: ignore[arg-type]
        return sqlite3.SQLITE_OK

    conn.set_authorizer(note)
    conn.execute(f"EXPLAIN {statement}")
    conn.set_authorizer(None)
    return seen


@pytest.mark.parametrize(
    ("statement", "table", "op", "needs"),
    [
        ("DELETE FROM account", "account", "delete", lambda f: delete_needs("account", f)),
        ("DELETE FROM ticket", "ticket", "delete", lambda f: delete_needs("ticket", f)),
        ("DELETE FROM node", "node", "delete", lambda f: delete_needs("node", f)),
        (
            "UPDATE account SET id = 'x'",
            "account",
            "update",
            lambda f: update_needs("account", {"id"}, f),
        ),
        (
            "UPDATE account SET name = 'x'",
            "account",
            "update",
            lambda f: update_needs("account", {"name"}, f),
        ),
        (
            "UPDATE ticket SET account_id = 'x'",
            "ticket",
            "update",
            lambda f: update_needs("ticket", {"account_id"}, f),
        ),
        (
            "INSERT INTO reply VALUES ('r', 't')",
            "reply",
            "insert",
            lambda f: insert_needs("reply", f),
        ),
    ],
)
def test_needs_are_what_sqlites_authorizer_checks(statement, table, op, needs) -> None:  # type: ignore[no-untyped-def]
    """Fails if a check or an action is missed (a cascade two levels down, a SET NULL's
    update, the read of a child whose key has no action, a child's read of its parent)
    or one is added that SQLite does not check (an update of a column no key uses)."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.execute("PRAGMA foreign_keys = ON")
    own: set[Need] = {(op, table), ("read", table)}  # the statement's own, granted or not
    assert set(needs(foreign_keys(conn))) - own == authorized(conn, statement) - own
