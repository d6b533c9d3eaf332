"""The rights a write needs through its foreign keys, with SQLite's authorizer as the oracle.

The oracle is asked on a schema as every sandbox has it: change-capture triggers
installed, `foreign_keys` and `recursive_triggers` on. The triggers change what SQLite
compiles (a parent's INSERT then scans its children), so a bare schema is the wrong oracle.
"""

from __future__ import annotations

import sqlite3

import pytest

from kaudit.postgres._referential import (
    ForeignKey,
    Need,
    delete_needs,
    insert_needs,
    update_needs,
)
from kaudit.substrate._capture import install_change_capture
from kaudit.substrate._schema import INTERNAL_PREFIX

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
    """Every foreign key, newest first: the order SQLite (and the PostgreSQL guard) walk."""
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
    return out[::-1]


def sandbox_like() -> sqlite3.Connection:
    """SCHEMA on a connection set up as a sandbox's is: capture triggers, both pragmas."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.execute("PRAGMA foreign_keys = ON")  # a no-op inside the capture's transaction
    conn.execute("PRAGMA recursive_triggers = ON")
    install_change_capture(conn)
    return conn


def authorized(conn: sqlite3.Connection, statement: str) -> list[Need]:
    """Each (operation, table) SQLite's authorizer asks about while compiling, in order.

    As the SQLite guard does, kaudit's own tables and what kaudit's triggers do are left
    out: the guard allows them whatever the grant.
    """
    seen: list[Need] = []

    def note(action: int, table: str | None, _c: object, _d: object, source: str | None) -> int:
        internal = (table or "").startswith(INTERNAL_PREFIX)
        if action in _OPS and table and not internal and source is None:
            seen.append((_OPS[action], table))  # type: ignore[arg-type]
        return sqlite3.SQLITE_OK

    conn.set_authorizer(note)
    conn.execute(f"EXPLAIN {statement}")
    conn.set_authorizer(None)
    return list(dict.fromkeys(seen))


def upsert_needs(table: str, columns: set[str], fks: list[ForeignKey]) -> list[Need]:
    """What PostgreSQL's guard checks for `ON CONFLICT DO UPDATE SET columns`: its INSERT
    trigger's needs, the UPDATE privilege, then its UPDATE OF triggers' needs."""
    return list(
        dict.fromkeys(
            [("update", table), *insert_needs(table, fks), *update_needs(table, columns, fks)]
        )
    )


def replace_needs(table: str, fks: list[ForeignKey]) -> list[Need]:
    """SQLite's `INSERT OR REPLACE`: an insert that may delete the row it replaces."""
    return list(dict.fromkeys(insert_needs(table, fks) + delete_needs(table, fks)))


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
        (
            "INSERT INTO account VALUES ('a', 'n')",
            "account",
            "insert",
            lambda f: insert_needs("account", f),
        ),
        (
            "INSERT INTO account VALUES ('a', 'n'), ('b', 'm')",
            "account",
            "insert",
            lambda f: insert_needs("account", f),
        ),
        (
            "INSERT INTO account SELECT 'a', 'n'",
            "account",
            "insert",
            lambda f: insert_needs("account", f),
        ),
        (
            "INSERT INTO ticket VALUES ('t', 'a')",
            "ticket",
            "insert",
            lambda f: insert_needs("ticket", f),
        ),
        (
            "INSERT INTO node VALUES ('n', NULL)",
            "node",
            "insert",
            lambda f: insert_needs("node", f),
        ),
        (
            "INSERT INTO ticket VALUES ('t', 'a') ON CONFLICT (id) DO NOTHING",
            "ticket",
            "insert",
            lambda f: insert_needs("ticket", f),
        ),
        (
            "INSERT INTO account VALUES ('a', 'n') ON CONFLICT (id) DO UPDATE SET name = 'z'",
            "account",
            "insert",
            lambda f: upsert_needs("account", {"name"}, f),
        ),
        (
            "INSERT INTO account VALUES ('a', 'n') ON CONFLICT (id) DO UPDATE SET id = 'z'",
            "account",
            "insert",
            lambda f: upsert_needs("account", {"id"}, f),
        ),
        (
            "INSERT INTO ticket VALUES ('t', 'a') "
            "ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id",
            "ticket",
            "insert",
            lambda f: upsert_needs("ticket", {"account_id"}, f),
        ),
        (
            "INSERT OR REPLACE INTO account VALUES ('a', 'n')",
            "account",
            "insert",
            lambda f: replace_needs("account", f),
        ),
        (
            "INSERT OR REPLACE INTO ticket VALUES ('t', 'a')",
            "ticket",
            "insert",
            lambda f: replace_needs("ticket", f),
        ),
    ],
)
def test_needs_are_what_sqlites_authorizer_checks(statement, table, op, needs) -> None:  # type: ignore[no-untyped-def]
    """Fails if a check or an action is missed (a cascade two levels down, a SET NULL's
    update, the read of a child whose key has no action, a child's read of its parent, a
    parent insert's scan of its children, an UPSERT's update or an OR REPLACE's delete)
    or one is added that SQLite does not check (an update of a column no key uses)."""
    conn = sandbox_like()
    own: set[Need] = {(op, table), ("read", table)}  # the statement's own, granted or not
    expected = [need for need in needs(foreign_keys(conn)) if need not in own]
    assert expected == [need for need in authorized(conn, statement) if need not in own]
