"""A world's SQLite template as PostgreSQL DDL, read from SQLite's own catalog.

The SQLite image stays the canonical seeded state; PostgreSQL gets the same tables,
column types by SQLite's affinity rules, NOT NULL, defaults, primary keys (composite
ones in key order), UNIQUE constraints and foreign keys with their ON DELETE/ON
UPDATE actions, so a cascade or a refused write behaves alike on both. An `INTEGER
PRIMARY KEY` (SQLite's alias of the rowid) gets SQLite's key assignment. What cannot be
carried over faithfully (CHECK constraints, views, user triggers, partial or expression
indexes, tables keyed by rowid, AUTOINCREMENT) is refused with the table's name rather
than silently dropped.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass

from kaudit.errors import SubstrateError
from kaudit.substrate._schema import (
    INTERNAL_PREFIX,
    Schema,
    TableSchema,
    quote,
    read_schema,
    rowid_alias,
)

COMPAT_FUNCTIONS = (
    "CREATE FUNCTION instr(text, text) RETURNS integer LANGUAGE sql IMMUTABLE "
    "AS $$ SELECT strpos($1, $2) $$",
    "CREATE FUNCTION ifnull(anyelement, anyelement) RETURNS anyelement LANGUAGE sql IMMUTABLE "
    "AS $$ SELECT coalesce($1, $2) $$",
    # SQLite's storage class of a value; columns here are typed by affinity, so the class
    # follows from the column's type.
    "CREATE FUNCTION typeof(anyelement) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT CASE "
    "WHEN $1 IS NULL THEN 'null' "
    "WHEN pg_typeof($1) IN ('bigint'::regtype, 'integer'::regtype, 'smallint'::regtype) "
    "THEN 'integer' "
    "WHEN pg_typeof($1) IN ('double precision'::regtype, 'real'::regtype) THEN 'real' "
    "WHEN pg_typeof($1) = 'bytea'::regtype THEN 'blob' ELSE 'text' END $$",
)
"""SQLite functions tools commonly use that PostgreSQL lacks, defined in every template."""

_CHECK = re.compile(r"\bCHECK\s*\(", re.IGNORECASE)
_AUTOINCREMENT = re.compile(r"\bAUTOINCREMENT\b", re.IGNORECASE)


@dataclass(frozen=True)
class PgTable:
    """One table's PostgreSQL DDL: created before the rows, constrained after them."""

    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    create: str
    constraints: tuple[str, ...]


def affinity_type(declared: str) -> str:
    """The PostgreSQL type for a SQLite declared type, by SQLite's affinity rules.

    INTEGER -> bigint, TEXT -> text, REAL and NUMERIC -> double precision (NUMERIC
    affinity stores integral values as integers, which a float8 brings back exactly
    below 2**53; the template check catches anything else), none -> bytea.
    """
    upper = declared.upper()
    if "INT" in upper:
        return "bigint"
    if any(word in upper for word in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if not upper or "BLOB" in upper:
        return "bytea"
    return "double precision"


def _refuse(table: str, reason: str) -> SubstrateError:
    return SubstrateError(f"table {table}: {reason}; the PostgreSQL substrate cannot carry it")


def _unique_keys(conn: sqlite3.Connection, table: TableSchema) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    for _, index, unique, origin, partial in conn.execute(
        f"PRAGMA index_list({quote(table.name)})"
    ).fetchall():
        if not unique or origin == "pk":
            continue
        columns = tuple(r[2] for r in conn.execute(f"PRAGMA index_info({quote(index)})"))
        if partial or None in columns:
            raise _refuse(table.name, f"index {index} is partial or on an expression")
        keys.append(columns)
    return keys


def _foreign_keys(conn: sqlite3.Connection, table: TableSchema, schema: Schema) -> list[str]:
    groups: dict[int, list[tuple[str, str, str | None, str, str]]] = {}
    for fk_id, _, parent, child_col, parent_col, on_update, on_delete, _ in conn.execute(
        f"PRAGMA foreign_key_list({quote(table.name)})"
    ).fetchall():
        groups.setdefault(fk_id, []).append((parent, child_col, parent_col, on_update, on_delete))
    out: list[str] = []
    for fk_id, parts in sorted(groups.items()):
        parent = parts[0][0]
        if parent not in schema.tables:
            raise _refuse(table.name, f"foreign key to unknown table {parent}")
        children = ", ".join(quote(p[1]) for p in parts)
        targets = [p[2] for p in parts]
        if None in targets:
            targets = list(schema.tables[parent].primary_key)
        referenced = ", ".join(quote(str(t)) for t in targets)
        out.append(
            f"ALTER TABLE {quote(table.name)} ADD CONSTRAINT "
            f"{quote(f'{table.name}_fk{fk_id}')} FOREIGN KEY ({children}) "
            f"REFERENCES {quote(parent)} ({referenced}) "
            f"ON UPDATE {parts[0][3]} ON DELETE {parts[0][4]}"
        )
    return out


def _rowid_key(table: str, column: str) -> tuple[str, str]:
    """A trigger giving `column` SQLite's rowid assignment when an INSERT leaves it NULL.

    SQLite gives such a row one more than the largest key in the table at that moment
    (1 in an empty table), also for an explicit NULL and for each row of a multi-row
    INSERT; a key freed by deleting the largest row is given again. A sequence would
    not: it never goes back. A row trigger reading max() does exactly this as long as
    one connection writes at a time, as one run's tool calls do. SECURITY DEFINER, so
    an identity allowed to insert but not to read the table gets its key all the same.
    """
    name = quote(INTERNAL_PREFIX + "rowid_" + hashlib.sha256(table.encode()).hexdigest()[:16])
    col, target = quote(column), f"public.{quote(table)}"
    function = (
        f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
        f"SET search_path = pg_catalog AS $kaudit$ BEGIN "
        f"IF NEW.{col} IS NULL THEN NEW.{col} := (SELECT coalesce(max({col}), 0) + 1 "
        f"FROM {target}); END IF; RETURN NEW; END $kaudit$"
    )
    trigger = (
        f"CREATE TRIGGER {quote(INTERNAL_PREFIX + 'rowid')} BEFORE INSERT ON {target} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}()"
    )
    return function, trigger


def _table(conn: sqlite3.Connection, table: TableSchema, schema: Schema) -> PgTable:
    if table.keyed_by_rowid:
        raise _refuse(table.name, "no declared primary key (rows are matched by rowid)")
    if _CHECK.search(table.sql):
        raise _refuse(table.name, "a CHECK constraint")
    if _AUTOINCREMENT.search(table.sql):
        raise _refuse(table.name, "AUTOINCREMENT (keys SQLite never gives again)")
    info = conn.execute(f"PRAGMA table_info({quote(table.name)})").fetchall()
    columns, types, parts = [], [], []
    for _, column, declared, notnull, default, _ in info:
        pg_type = affinity_type(declared or "")
        columns.append(column)
        types.append(pg_type)
        part = f"{quote(column)} {pg_type}"
        if notnull:
            part += " NOT NULL"
        if default is not None:
            part += f" DEFAULT {default}"
        parts.append(part)
    parts.append(f"PRIMARY KEY ({', '.join(quote(c) for c in table.primary_key)})")
    constraints = [
        f"ALTER TABLE {quote(table.name)} ADD UNIQUE ({', '.join(quote(c) for c in key)})"
        for key in _unique_keys(conn, table)
    ]
    constraints += _foreign_keys(conn, table, schema)
    alias = rowid_alias(conn, table)
    if alias is not None:
        constraints += _rowid_key(table.name, alias)
    create = f"CREATE TABLE {quote(table.name)} ({', '.join(parts)})"
    return PgTable(table.name, tuple(columns), tuple(types), create, tuple(constraints))


def translate(conn: sqlite3.Connection) -> list[PgTable]:
    """Every user table of the SQLite database on `conn`, as PostgreSQL DDL, by name."""
    others = [
        (kind, name)
        for kind, name in conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name"
        )
        if not name.startswith(INTERNAL_PREFIX)
    ]
    if others:
        kind, name = others[0]
        raise _refuse(name, f"a {kind}")
    schema = read_schema(conn)
    return [_table(conn, table, schema) for table in schema.tables.values()]
