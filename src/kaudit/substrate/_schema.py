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
    has_rowid: bool = True
    """False for a WITHOUT ROWID table (whose primary key is then never NULL)."""

    @property
    def keyed_by_rowid(self) -> bool:
        """Whether rows are matched by rowid because no primary key was declared."""
        return self.primary_key == ("rowid",)


@dataclass(frozen=True)
class Schema:
    """Every user table of a database, by name."""

    tables: dict[str, TableSchema]


@dataclass(frozen=True)
class ForeignKey:
    """One foreign key: `child(child_columns)` references `parent(parent_columns)`.

    `on_delete` and `on_update` are the action: cascade, set_null, set_default or none.
    A key a world declares (for a schema that declares none) has no action, and empty
    `parent_columns` stand for the parent's primary key.
    """

    child: str
    child_columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...] = ()
    on_delete: str = "none"
    on_update: str = "none"


def quote(identifier: str) -> str:
    """Quote an SQL identifier (table or column name) for SQLite."""
    return '"' + identifier.replace('"', '""') + '"'


_CACHE: dict[tuple[tuple[str, str], ...], Schema] = {}


def affinity(declared: str) -> str:
    """SQLite's column affinity for a declared type: its five documented rules, in order.

    `INTEGER`, `TEXT`, `BLOB` (also for no declared type), `REAL` or `NUMERIC`.
    """
    kind = declared.upper()
    if "INT" in kind:
        return "INTEGER"
    if any(part in kind for part in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in kind or not kind:
        return "BLOB"
    if any(part in kind for part in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


_CACHE_LIMIT = 256


def read_schema(conn: sqlite3.Connection, database: str = "main") -> Schema:
    """Tables, columns and primary keys of `database` (an attached name or 'main').

    Memoized on the tables' CREATE statements: the same DDL always yields the same
    schema, and every run of a campaign shares its template's DDL, so the per-table
    PRAGMA calls happen once per world instead of once per run.
    """
    rows = tuple(
        conn.execute(
            f"SELECT name, sql FROM {quote(database)}.sqlite_master "
            "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).fetchall()
    )
    cached = _CACHE.get(rows)
    if cached is None:
        cached = _read_tables(conn, database, rows)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[rows] = cached
    return cached


def _read_tables(
    conn: sqlite3.Connection, database: str, rows: tuple[tuple[str, str], ...]
) -> Schema:
    tables: dict[str, TableSchema] = {}
    for name, sql in rows:
        if name.startswith(INTERNAL_PREFIX):
            continue
        info = conn.execute(f"PRAGMA {quote(database)}.table_info({quote(name)})").fetchall()
        columns = tuple(row[1] for row in info)
        keyed = sorted((row[5], row[1]) for row in info if row[5] > 0)
        primary_key = tuple(column for _, column in keyed) or ("rowid",)
        # Filtered on the schema: pragma_table_list lists every attached database.
        without = conn.execute(
            "SELECT wr FROM pragma_table_list WHERE schema = ? AND name = ?", (database, name)
        ).fetchone()
        tables[name] = TableSchema(
            name, columns, primary_key, sql or "", not (without and without[0])
        )
    return Schema(tables)


def rowid_alias(conn: sqlite3.Connection, table: TableSchema) -> str | None:
    """The column that is SQLite's rowid under another name (`INTEGER PRIMARY KEY`), if any.

    SQLite indexes every other primary key separately, so a one-column key on a rowid
    table without a `pk` index is the rowid itself (`INTEGER PRIMARY KEY DESC`, `INT
    PRIMARY KEY` and WITHOUT ROWID tables get an index and are ordinary keys).
    """
    if not table.has_rowid or len(table.primary_key) != 1:
        return None
    indexes = conn.execute(f"PRAGMA index_list({quote(table.name)})").fetchall()
    return None if any(row[3] == "pk" for row in indexes) else table.primary_key[0]


def drop_temporary(conn: sqlite3.Connection, kinds: tuple[str, ...]) -> None:
    """Drop the temp schema's objects of `kinds` ('trigger', 'view', 'table').

    Indexes and triggers on a temporary table go with it.
    """
    marks = ", ".join("?" * len(kinds))
    rows = conn.execute(
        f"SELECT type, name FROM temp.sqlite_master WHERE type IN ({marks})", kinds
    ).fetchall()
    for kind, name in rows:
        conn.execute(f"DROP {kind.upper()} IF EXISTS temp.{quote(name)}")
