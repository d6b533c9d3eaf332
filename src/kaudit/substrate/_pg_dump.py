"""A PostgreSQL database's state as the SQLite image the labeler reads.

The dump reads tables, columns and primary keys from PostgreSQL's catalog and the
rows with `COPY ... TO STDOUT`, then loads them into an in-memory SQLite database
created with the template's own DDL, so the labeler, its checks and its SQL
verifiers apply unchanged and see the same values: integers as integers, float8
back to the exact double it came from, text byte for byte, NULL as NULL. A table
whose columns or key no longer match the template (the agent ran DDL) is created
from the catalog instead, so the labeler sees the schema change.
"""

from __future__ import annotations

import datetime
import sqlite3
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg

from kaudit.substrate._dump import StateDump
from kaudit.substrate._schema import Schema, quote

_CATALOG = """
SELECT c.relname, a.attname, a.atttypid::int, a.attnum,
       coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                 WHERE k.attnum = a.attnum), 0) AS key_position
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
WHERE c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum
"""


@dataclass(frozen=True)
class CatalogTable:
    """One table as PostgreSQL's catalog describes it."""

    name: str
    columns: tuple[str, ...]
    type_oids: tuple[int, ...]
    primary_key: tuple[str, ...]


def catalog_tables(conn: psycopg.Connection[Any]) -> dict[str, CatalogTable]:
    """Every table of the `public` schema with its columns, their types and its primary key."""
    found: dict[str, tuple[list[str], list[int], list[tuple[int, str]]]] = {}
    with conn.cursor() as cursor:
        for table, column, oid, _, position in cursor.execute(_CATALOG):
            columns, oids, key = found.setdefault(table, ([], [], []))
            columns.append(column)
            oids.append(oid)
            if position:
                key.append((position, column))
    return {
        name: CatalogTable(name, tuple(cols), tuple(oids), tuple(c for _, c in sorted(key)))
        for name, (cols, oids, key) in found.items()
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
    return str(value)


def copy_rows(conn: psycopg.Connection[Any], table: CatalogTable) -> list[tuple[Any, ...]]:
    """Every row of `table`, read with COPY and loaded by each column's type."""
    columns = ", ".join(quote(c) for c in table.columns)
    statement = f"COPY {quote(table.name)} ({columns}) TO STDOUT".encode()
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
