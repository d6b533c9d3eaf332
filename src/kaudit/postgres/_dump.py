"""A PostgreSQL database's state as the SQLite image the labeler reads.

The dump reads tables, columns and primary keys from PostgreSQL's catalog and the
rows with binary `COPY ... TO STDOUT`, then loads them into an in-memory SQLite database
created with the template's own DDL, so the labeler, its checks and its SQL
verifiers apply unchanged and see the same values: integers as integers, float8
back to the exact double it came from, text byte for byte, NULL as NULL. A table
whose columns or key no longer match the template (the agent ran DDL) is created
from the catalog instead, so the labeler sees the schema change.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg

from kaudit.errors import SubstrateError
from kaudit.substrate import Schema, StateDump, quote

_CATALOG = """
SELECT c.relname, a.attname, a.atttypid::int, format_type(a.atttypid, a.atttypmod),
       a.attnotnull,
       coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                 WHERE k.attnum = a.attnum), 0) AS key_position
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
WHERE c.relkind IN ('r', 'p') AND NOT starts_with(c.relname, '_kaudit_')
ORDER BY c.relname, a.attnum
"""
"""Every table of `public` but kaudit's own (the change log is not the world's state)."""


def declared_type(pg_type: str) -> str:
    """The SQLite column type a PostgreSQL type is stored under in the labeler's image.

    Integers and booleans (0/1) as INTEGER; float and numeric as REAL (a numeric with
    at most 15 significant digits, such as money in cents, comes back to the same
    decimal); bytea as BLOB; everything else (text, dates and times in ISO form, UUIDs,
    JSON) as TEXT.
    """
    name = pg_type.lower()
    if name in ("smallint", "integer", "bigint", "boolean"):
        return "INTEGER"
    if name in ("real", "double precision") or name.startswith("numeric"):
        return "REAL"
    return "BLOB" if name == "bytea" else "TEXT"


def typed_create_sql(table: CatalogTable) -> str:
    """A SQLite CREATE TABLE for `table` with declared types, NOT NULL and its primary key."""
    parts = [
        f"{quote(column)} {declared_type(pg_type)}" + (" NOT NULL" if not_null else "")
        for column, pg_type, not_null in zip(
            table.columns, table.type_names, table.not_null, strict=True
        )
    ]
    parts.append(f"PRIMARY KEY ({', '.join(quote(c) for c in table.primary_key)})")
    return f"CREATE TABLE {quote(table.name)} ({', '.join(parts)})"


@dataclass(frozen=True)
class CatalogTable:
    """One table as PostgreSQL's catalog describes it."""

    name: str
    columns: tuple[str, ...]
    type_oids: tuple[int, ...]
    primary_key: tuple[str, ...]
    type_names: tuple[str, ...] = ()
    not_null: tuple[bool, ...] = ()


def catalog_tables(conn: psycopg.Connection[Any]) -> dict[str, CatalogTable]:
    """Every table of the `public` schema with its columns, their types and its primary key."""
    found: dict[str, list[tuple[str, int, str, bool, int]]] = {}
    with conn.cursor() as cursor:
        for table, column, oid, type_name, not_null, position in cursor.execute(_CATALOG):
            found.setdefault(table, []).append((column, oid, type_name, not_null, position))
    return {
        name: CatalogTable(
            name,
            columns=tuple(c[0] for c in cols),
            type_oids=tuple(c[1] for c in cols),
            primary_key=tuple(c[0] for c in sorted(cols, key=lambda c: c[4]) if c[4]),
            type_names=tuple(c[2] for c in cols),
            not_null=tuple(c[3] for c in cols),
        )
        for name, cols in found.items()
    }


def sqlite_value(value: Any) -> Any:
    """A value psycopg loaded, as SQLite stores it (booleans 0/1, times as ISO text)."""
    if value is None or isinstance(value, int | float | str | bytes):
        return int(value) if isinstance(value, bool) else value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def copy_rows(conn: psycopg.Connection[Any], table: CatalogTable) -> list[tuple[Any, ...]]:
    """Every row of `table`, read with binary COPY and loaded by each column's type.

    Binary, because a float8 then travels as its eight bytes (exact whatever the
    server's `extra_float_digits`) and loading skips text parsing (about half the time).
    """
    columns = ", ".join(quote(c) for c in table.columns)
    statement = f"COPY {quote(table.name)} ({columns}) TO STDOUT (FORMAT binary)".encode()
    with conn.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types(list(table.type_oids))
        return [tuple(sqlite_value(v) for v in row) for row in copy.rows()]


def _create_sql(table: CatalogTable, template: Schema) -> str:
    known = template.tables.get(table.name)
    if (
        known is not None
        and known.columns == table.columns
        and known.primary_key == table.primary_key
    ):
        return known.sql
    key = f", PRIMARY KEY ({', '.join(quote(c) for c in table.primary_key)})"
    columns = ", ".join(quote(c) for c in table.columns)
    return f"CREATE TABLE {quote(table.name)} ({columns}{key if table.primary_key else ''})"


def dump_image(conn: psycopg.Connection[Any], template: Schema) -> bytes:
    """The database on `conn` as a SQLite image with `template`'s DDL where it still fits."""
    image = sqlite3.connect(":memory:")
    try:
        for table in catalog_tables(conn).values():
            image.execute(_create_sql(table, template))
            marks = ", ".join("?" for _ in table.columns)
            image.executemany(
                f"INSERT INTO {quote(table.name)} VALUES ({marks})", copy_rows(conn, table)
            )
        image.commit()
        return image.serialize()
    finally:
        image.close()


def _typed_rows(conn: sqlite3.Connection, table: str, order: tuple[str, ...]) -> list[Any]:
    keys = ", ".join(quote(c) for c in order) or "rowid"
    rows = conn.execute(f"SELECT * FROM {quote(table)} ORDER BY {keys}").fetchall()
    return [tuple((type(v).__name__, v) for v in row) for row in rows]


def first_difference(expected: StateDump, actual: bytes) -> str | None:
    """Where `actual`'s tables or rows differ from `expected` (types included), or None."""
    want, got = expected.schema(), StateDump.of(actual).schema()
    if set(want.tables) != set(got.tables):
        return f"tables differ: {sorted(set(want.tables) ^ set(got.tables))}"
    a, b = expected.open(), sqlite3.connect(":memory:")
    b.deserialize(actual)
    try:
        for name, table in want.tables.items():
            if got.tables[name].columns != table.columns:
                return f"table {name}: columns differ"
            left = _typed_rows(a, name, table.primary_key)
            right = _typed_rows(b, name, table.primary_key)
            for row_a, row_b in zip(left, right, strict=False):
                if row_a != row_b:
                    return f"table {name}: row {row_a} came back as {row_b}"
            if len(left) != len(right):
                return f"table {name}: {len(left)} rows came back as {len(right)}"
        return None
    finally:
        a.close()
        b.close()


def database_image(conn: psycopg.Connection[Any]) -> bytes:
    """The database on `conn` as a SQLite template image with typed tables (change capture on).

    Every table needs a primary key, since the labeler matches rows by it.
    """
    from kaudit.substrate._sqlite import build_image

    tables = catalog_tables(conn)
    missing = sorted(name for name, table in tables.items() if not table.primary_key)
    if missing:
        raise SubstrateError(f"table {missing[0]} has no primary key; the labeler needs one")
    rows = {name: copy_rows(conn, table) for name, table in tables.items()}

    def build(image: sqlite3.Connection) -> None:
        for name, table in tables.items():
            image.execute(typed_create_sql(table))
            marks = ", ".join("?" for _ in table.columns)
            image.executemany(f"INSERT INTO {quote(name)} VALUES ({marks})", rows[name])

    return build_image(build)
