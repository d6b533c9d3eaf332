from __future__ import annotations

import sqlite3

from kaudit.substrate import read_schema


def test_an_attached_database_is_read_as_itself() -> None:
    """`pragma_table_list` lists every attached database, main first. Fails if the
    WITHOUT ROWID flag were read without filtering on the schema (the attached table
    would take main's flag)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v)")
    conn.execute("ATTACH ':memory:' AS init")
    conn.execute("CREATE TABLE init.t (k TEXT PRIMARY KEY, v) WITHOUT ROWID")
    assert read_schema(conn, "main").tables["t"].has_rowid
    assert not read_schema(conn, "init").tables["t"].has_rowid
