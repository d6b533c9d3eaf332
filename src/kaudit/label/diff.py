"""Primary-key row diff of two SQLite state images, computed inside the engine.

Rows stay in SQLite: the full path finds differing keys with joins and anti-joins
and fetches only those rows; the fast path reads the change log the template's
triggers filled and visits only touched rows. Both return the same changes (proved
by property tests); the fast path is used only when its preconditions hold.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager

from kaudit.label._types import Row, RowChange
from kaudit.label._values import Value, same_value
from kaudit.substrate import CHANGE_LOG, TableSchema, has_change_capture, quote, read_schema

Volatile = Mapping[str, Collection[str]]


@contextmanager
def attached(initial: bytes, final: bytes) -> Iterator[sqlite3.Connection]:
    """One private connection: `main` is the final image, `init` the initial one."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(final)
        conn.execute("ATTACH ':memory:' AS init")
        conn.deserialize(initial, name="init")
        yield conn
    finally:
        conn.close()


def diff_images(
    initial: bytes, final: bytes, volatile: Volatile | None = None, *, fast: bool = True
) -> list[RowChange]:
    """Every row change from `initial` to `final`, volatile columns masked, sorted.

    `fast=False` forces the full diff (the reference the fast path is tested against).
    """
    with attached(initial, final) as conn:
        return diff_attached(conn, volatile, fast=fast)


def diff_attached(
    conn: sqlite3.Connection, volatile: Volatile | None = None, *, fast: bool = True
) -> list[RowChange]:
    """`diff_images` over a connection opened by `attached`."""
    volatile = volatile or {}
    before, after = read_schema(conn, "init"), read_schema(conn, "main")
    changes: list[RowChange] = []
    comparable: list[TableSchema] = []
    for name in sorted(set(before.tables) | set(after.tables)):
        old, new = before.tables.get(name), after.tables.get(name)
        if old is not None and new is not None and _same_shape(old, new):
            comparable.append(new)
        else:
            changes.extend(_schema_changes(conn, old, new))
    touched = _touched_keys(conn) if fast else None
    for table in comparable:
        mask = frozenset(volatile.get(table.name, ()))
        if touched is None:
            changes.extend(_full_table_diff(conn, table, mask))
        elif table.name in touched:
            changes.extend(_touched_diff(conn, table, mask, touched[table.name]))
    return sorted(changes, key=RowChange.sort_key)


def _same_shape(old: TableSchema, new: TableSchema) -> bool:
    return old.columns == new.columns and old.primary_key == new.primary_key


def _touched_keys(conn: sqlite3.Connection) -> dict[str, list[str]] | None:
    """Keys the change log saw, or None when the log cannot be trusted for this pair."""
    if not (has_change_capture(conn, "init") and has_change_capture(conn, "main")):
        return None
    if conn.execute(f"SELECT 1 FROM init.{CHANGE_LOG} LIMIT 1").fetchone() is not None:
        return None  # the initial state is not a pristine template
    touched: dict[str, list[str]] = {}
    for table, key in conn.execute(f"SELECT DISTINCT tbl, pk FROM main.{CHANGE_LOG}"):
        touched.setdefault(table, []).append(key)
    return touched


def _select(table: TableSchema, database: str) -> str:
    columns = ", ".join(quote(c) for c in table.columns)
    rowid = "rowid, " if table.keyed_by_rowid else ""
    return f"SELECT {rowid}{columns} FROM {database}.{quote(table.name)}"


def _where_key(table: TableSchema) -> str:
    return " AND ".join(f"{quote(c)} IS ?" for c in table.primary_key)


def _fetch(
    conn: sqlite3.Connection, table: TableSchema, database: str, key: tuple[Value, ...]
) -> Row | None:
    sql = f"{_select(table, database)} WHERE {_where_key(table)}"
    row = conn.execute(sql, key).fetchone()
    if row is None:
        return None
    values = row[1:] if table.keyed_by_rowid else row
    return dict(zip(table.columns, values, strict=True))


def _compare(
    table: TableSchema,
    key: tuple[Value, ...],
    before: Row | None,
    after: Row | None,
    mask: frozenset[str],
) -> RowChange | None:
    named = tuple(zip(table.primary_key, key, strict=True))
    if before is None and after is None:
        return None
    if before is None:
        return RowChange(table.name, "added", named, None, after)
    if after is None:
        return RowChange(table.name, "removed", named, before, None)
    changed = tuple(
        c for c in table.columns if c not in mask and not same_value(before[c], after[c])
    )
    if not changed:
        return None
    return RowChange(table.name, "modified", named, before, after, changed)


def _touched_diff(
    conn: sqlite3.Connection, table: TableSchema, mask: frozenset[str], keys: list[str]
) -> Iterator[RowChange]:
    for encoded in keys:
        key = tuple(json.loads(encoded))
        change = _compare(
            table, key, _fetch(conn, table, "init", key), _fetch(conn, table, "main", key), mask
        )
        if change is not None:
            yield change


def _on_key(pk: tuple[str, ...], left: str, right: str) -> str:
    return " AND ".join(f"{left}.{quote(c)} IS {right}.{quote(c)}" for c in pk)


def _differs(column: str, left: str, right: str) -> str:
    c = quote(column)
    return f"({left}.{c} IS NOT {right}.{c} OR typeof({left}.{c}) != typeof({right}.{c}))"


def _full_table_diff(
    conn: sqlite3.Connection, table: TableSchema, mask: frozenset[str]
) -> Iterator[RowChange]:
    name, pk = quote(table.name), table.primary_key
    keys = ", ".join(f"k.{quote(c)}" for c in pk)
    compared = [c for c in table.columns if c not in mask]
    differs = " OR ".join(_differs(c, "k", "o") for c in compared) or "0"
    queries = (
        f"SELECT {keys} FROM main.{name} AS k WHERE NOT EXISTS "
        f"(SELECT 1 FROM init.{name} AS o WHERE {_on_key(pk, 'k', 'o')})",
        f"SELECT {keys} FROM init.{name} AS k WHERE NOT EXISTS "
        f"(SELECT 1 FROM main.{name} AS o WHERE {_on_key(pk, 'k', 'o')})",
        f"SELECT {keys} FROM main.{name} AS k JOIN init.{name} AS o ON "
        f"{_on_key(pk, 'k', 'o')} WHERE {differs}",
    )
    for sql in queries:
        for found in conn.execute(sql).fetchall():
            key = tuple(found)
            before = _fetch(conn, table, "init", key)
            after = _fetch(conn, table, "main", key)
            change = _compare(table, key, before, after, mask)
            if change is not None:
                yield change


def _schema_changes(
    conn: sqlite3.Connection, old: TableSchema | None, new: TableSchema | None
) -> Iterator[RowChange]:
    """A dropped, created or reshaped table: one schema change plus its rows as removed/added."""
    table = (old or new).name  # type: ignore[union-attr]
    yield RowChange(table, "schema", (), None, None)
    for schema, database, op in ((old, "init", "removed"), (new, "main", "added")):
        if schema is None:
            continue
        for row in conn.execute(_select(schema, database)).fetchall():
            values = row[1:] if schema.keyed_by_rowid else row
            record = dict(zip(schema.columns, values, strict=True))
            key_values = (
                row[:1] if schema.keyed_by_rowid else tuple(record[c] for c in schema.primary_key)
            )
            key = tuple(zip(schema.primary_key, key_values, strict=True))
            yield RowChange(
                table,
                op,  # type: ignore[arg-type]
                key,
                record if op == "removed" else None,
                record if op == "added" else None,
            )
