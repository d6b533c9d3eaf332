"""Change capture on PostgreSQL: triggers in the template log which rows a run touched.

The dump then reads only those rows instead of copying every table. Every table of a
template gets one `AFTER INSERT OR UPDATE OR DELETE` row trigger that logs the table and
the touched row's key (as text, cast back to the key's own types when read, so a float8
key comes back as the same double) and one `AFTER TRUNCATE` statement trigger that logs
the table with no key (TRUNCATE fires no row trigger). The triggers are `ENABLE ALWAYS`,
so `session_replication_role = replica` does not silence them, and their functions are
`SECURITY DEFINER`, so an identity's role writes the log without any right on it. They
fire for cascaded foreign-key actions too, and a rolled-back savepoint takes its log
entries with it.

What fires no trigger is DDL: a dropped, re-created or altered table, a trigger disabled
or dropped, a rule rewriting writes, the log's function replaced. So each database's
`catalog_fingerprint` is taken when it is made (the template's state) and again at the
dump; any difference, or a TRUNCATE, makes the dump read every table as before. The log
table is internal (never dumped as state), and a tool statement that writes it is refused
(`PostgresDb`). Extra entries cost a row read and never a wrong state; only a missing one
could, which is what the fingerprint and the refusal close.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from kaudit.postgres._dump import CatalogTable, sqlite_value
from kaudit.substrate import quote
from kaudit.substrate._schema import INTERNAL_PREFIX

CHANGE_LOG = f"{INTERNAL_PREFIX}change_log"
_ROW_FUNCTION = f"{INTERNAL_PREFIX}capture_row"
_TRUNCATE_FUNCTION = f"{INTERNAL_PREFIX}capture_truncate"
_ROW_TRIGGER = f"{INTERNAL_PREFIX}capture"
_TRUNCATE_TRIGGER = f"{INTERNAL_PREFIX}capture_truncate"
_LOG = f"public.{quote(CHANGE_LOG)}"


def capture_statements(tables: dict[str, tuple[str, ...]]) -> list[str]:
    """The log, its two functions and every table's triggers; `tables` maps name -> key."""
    key = (
        "ARRAY(SELECT to_jsonb({row}) ->> a "
        "FROM unnest(TG_ARGV) WITH ORDINALITY AS k(a, n) ORDER BY n)"
    )
    old, new = key.format(row="OLD"), key.format(row="NEW")
    out = [
        f"CREATE TABLE {_LOG} (tbl text NOT NULL, key text[])",
        f"CREATE FUNCTION public.{quote(_ROW_FUNCTION)}() RETURNS trigger LANGUAGE plpgsql "
        "SECURITY DEFINER SET search_path = pg_catalog AS $kaudit$ "
        "DECLARE before text[]; after text[]; BEGIN "
        f"IF TG_OP <> 'INSERT' THEN before := {old}; "
        f"INSERT INTO {_LOG} (tbl, key) VALUES (TG_TABLE_NAME, before); END IF; "
        f"IF TG_OP <> 'DELETE' THEN after := {new}; "
        "IF before IS DISTINCT FROM after THEN "
        f"INSERT INTO {_LOG} (tbl, key) VALUES (TG_TABLE_NAME, after); END IF; END IF; "
        "RETURN NULL; END $kaudit$",
        f"CREATE FUNCTION public.{quote(_TRUNCATE_FUNCTION)}() RETURNS trigger LANGUAGE plpgsql "
        "SECURITY DEFINER SET search_path = pg_catalog AS $kaudit$ BEGIN "
        f"INSERT INTO {_LOG} (tbl, key) VALUES (TG_TABLE_NAME, NULL); RETURN NULL; END $kaudit$",
    ]
    for name, primary_key in tables.items():
        table = f"public.{quote(name)}"
        columns = ", ".join("'" + c.replace("'", "''") + "'" for c in primary_key)
        out += [
            f"CREATE TRIGGER {quote(_ROW_TRIGGER)} AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION public.{quote(_ROW_FUNCTION)}({columns})",
            f"CREATE TRIGGER {quote(_TRUNCATE_TRIGGER)} AFTER TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION public.{quote(_TRUNCATE_FUNCTION)}()",
            f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {quote(_ROW_TRIGGER)}",
            f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {quote(_TRUNCATE_TRIGGER)}",
        ]
    return out


_FINGERPRINT = f"""
WITH t AS (SELECT c.oid, c.relname, c.relkind, c.relhasrules FROM pg_class c
           WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p'))
SELECT md5(coalesce(string_agg(x, '|' ORDER BY x COLLATE "C"), '')) FROM (
  SELECT format('r %s %s %s %s', t.oid, t.relname, t.relkind, t.relhasrules) AS x FROM t
  UNION ALL
  SELECT format('a %s %s %s %s %s', a.attrelid, a.attnum, a.attname, a.atttypid, a.attnotnull)
  FROM pg_attribute a WHERE a.attrelid IN (SELECT oid FROM t) AND a.attnum > 0
    AND NOT a.attisdropped
  UNION ALL
  SELECT format('i %s %s', i.indrelid, i.indkey) FROM pg_index i
  WHERE i.indrelid IN (SELECT oid FROM t) AND i.indisprimary
  UNION ALL
  SELECT format('t %s %s %s %s %s', g.oid, g.tgrelid, g.tgname, g.tgenabled, g.tgfoid)
  FROM pg_trigger g WHERE g.tgrelid IN (SELECT oid FROM t)
    AND g.tgname IN ('{_ROW_TRIGGER}', '{_TRUNCATE_TRIGGER}')
  UNION ALL
  SELECT format('f %s %s %s %s', p.oid, p.pronamespace, p.prosecdef, md5(p.prosrc))
  FROM pg_proc p WHERE p.proname IN ('{_ROW_FUNCTION}', '{_TRUNCATE_FUNCTION}')
) AS s
"""
"""Everything whose change could hide a write from the log or reshape a table.

Object ids are part of it: a clone carries its template's, so a table or trigger dropped
and made again under the same name differs."""

_TOUCHED = f"""
SELECT ({_FINGERPRINT}),
       ARRAY(SELECT DISTINCT tbl FROM {_LOG} WHERE key IS NOT NULL ORDER BY 1),
       EXISTS (SELECT 1 FROM {_LOG} WHERE key IS NULL)
"""


def catalog_fingerprint(conn: psycopg.Connection[Any]) -> str:
    """The fingerprint of the tables, keys and capture triggers of the database on `conn`."""
    row = conn.execute(_FINGERPRINT).fetchone()
    return str(row[0]) if row else ""


TouchedRow = tuple[tuple[Any, ...], tuple[Any, ...] | None]
"""A logged key as SQLite stores it, and the row's values now (None: the row is gone)."""


@dataclass(frozen=True)
class Changes:
    """The rows a run touched, per table, read back from its database."""

    rows: dict[str, list[TouchedRow]]


def read_changes(
    conn: psycopg.Connection[Any], fingerprint: str, catalog: dict[str, CatalogTable]
) -> Changes | str:
    """Every logged row with its values now, or why the log cannot be trusted here."""
    row = conn.execute(_TOUCHED).fetchone()
    if row is None:
        return "the change log cannot be read"
    now, tables, truncated = row
    if now != fingerprint:
        return "DDL ran during the run: the change log may have missed writes"
    if truncated:
        return "a table was truncated, which logs no row"
    found: dict[str, list[TouchedRow]] = {}
    for name in tables:
        table = catalog.get(name)
        if table is None:
            return f"the change log names table {name}, which the template does not have"
        found[name] = _touched_rows(conn, table)
    return Changes(found)


def _touched_rows(conn: psycopg.Connection[Any], table: CatalogTable) -> list[TouchedRow]:
    """Each distinct logged key of `table`, typed as its columns, with the row now if any.

    Binary COPY and the columns' own types, as in the full dump, so values come back
    exactly alike on both paths.
    """
    types = dict(zip(table.columns, table.type_names, strict=True))
    oids = dict(zip(table.columns, table.type_oids, strict=True))
    width = len(table.primary_key)
    keys = ", ".join(
        f"l.key[{i}]::{types[c]} AS {quote('k' + str(i))}"
        for i, c in enumerate(table.primary_key, start=1)
    )
    on = " AND ".join(
        f"t.{quote(c)} = l.{quote('k' + str(i))}" for i, c in enumerate(table.primary_key, start=1)
    )
    columns = ", ".join(f"t.{quote(c)}" for c in table.columns)
    present = f"t.{quote(table.primary_key[0])} IS NOT NULL"
    select = (
        f"SELECT l.*, {present}, {columns} FROM (SELECT DISTINCT {keys} FROM {_LOG} AS l "
        f"WHERE l.tbl = {_literal(table.name)}) AS l LEFT JOIN public.{quote(table.name)} AS t "
        f"ON {on}"
    )
    statement = f"COPY ({select}) TO STDOUT (FORMAT binary)".encode()
    out: list[TouchedRow] = []
    with conn.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types([oids[c] for c in table.primary_key] + [16] + list(table.type_oids))
        for values in copy.rows():
            key = tuple(sqlite_value(v) for v in values[:width])
            here = values[width]
            out.append((key, tuple(sqlite_value(v) for v in values[width + 1 :]) if here else None))
    return out


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
