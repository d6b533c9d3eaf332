"""Reading a world's schema from the database itself, never from a hand-written list."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

INTERNAL_PREFIX = "_kaudit_"
"""Tables kaudit adds to a world (the change log); never part of its state, never diffed."""


@dataclass(frozen=True)
class TableSchema:
    """One table: its columns in order and its primary key (composite keys in key order).

    A table without a declared primary key is keyed by SQLite's `rowid`.
    """

    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...]
    sql: str

    @property
    def keyed_by_rowid(self) -> bool:
        """Whether rows are matched by rowid because no primary key was declared."""
        return self.primary_key == ("rowid",)


@dataclass(frozen=True)
class Schema:
    """Every user table of a database, by name."""

    tables: dict[str, TableSchema]

    def to_json(self) -> dict[str, dict[str, list[str]]]:
        """Columns and primary keys per table, for the ledger."""
        return {
            name: {"columns": list(t.columns), "primary_key": list(t.primary_key)}
            for name, t in sorted(self.tables.items())
        }


def quote(identifier: str) -> str:
    """Quote an SQL identifier (table or column name) for SQLite."""
    return '"' + identifier.replace('"', '""') + '"'


def read_schema(conn: sqlite3.Connection, database: str = "main") -> Schema:
    """Tables, columns and primary keys of `database` (an attached name or 'main')."""
    rows = conn.execute(
        f"SELECT name, sql FROM {quote(database)}.sqlite_master "
        "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    ).fetchall()
    tables: dict[str, TableSchema] = {}
    for name, sql in rows:
        if name.startswith(INTERNAL_PREFIX):
            continue
        info = conn.execute(f"PRAGMA {quote(database)}.table_info({quote(name)})").fetchall()
        columns = tuple(row[1] for row in info)
        keyed = sorted((row[5], row[1]) for row in info if row[5] > 0)
        primary_key = tuple(column for _, column in keyed) or ("rowid",)
        tables[name] = TableSchema(name, columns, primary_key, sql or "")
    return Schema(tables)
