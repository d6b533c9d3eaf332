"""Change capture: triggers that log which rows a run touched, baked into the template.

The labeler then visits only touched rows instead of every table. Each log entry holds
the touched row's key as typed values (one column per key part, no type affinity, so
a REAL key keeps all 17 digits and a blob stays a blob), its rowid (so a row whose
primary key is NULL can still be found), and, for tables where a REPLACE through a
UNIQUE column can delete another row, whether the writing connection had
`recursive_triggers` on. The traps this closes: `INSERT OR REPLACE` deletes without
firing delete triggers unless `recursive_triggers` is on (every sandbox connection
sets it, and an entry written without it makes the labeler distrust the log); DDL
fires no trigger and a re-created table (or a trigger dropped and re-created) logged
nothing in between, so the labeler takes the full diff whenever the schema cookie
changed; the log table is internal (never dumped as state, never reachable by a tool).
The full diff stays the reference and property tests prove both paths equal.

The same triggers refuse a NULL written into a primary key column that SQLite would
accept one in (a rowid table's key that is not the rowid itself, declared without NOT
NULL: a legacy quirk). PostgreSQL and the SQL standard refuse it, so without this a tool
writing a NULL key would succeed on one substrate and fail on the other, and several
rows under the same NULL key could only be told apart by rowid. The statement fails as
SQLite's own NOT NULL constraint does, and its changes are undone. Rows already keyed by
NULL in a template stay (their key may not be set, but the rest of them may change).
"""

from __future__ import annotations

import sqlite3

from kaudit.substrate._schema import (
    INTERNAL_PREFIX,
    TableSchema,
    quote,
    read_schema,
    rowid_alias,
)
from kaudit.substrate._triggers import change_log_triggers

CHANGE_LOG = f"{INTERNAL_PREFIX}change_log"
CAPTURE_VERSION = 4
"""Bumped whenever the log's layout changes, so cached templates are rebuilt."""


def key_width(conn: sqlite3.Connection, database: str = "main") -> int:
    """How many key columns the log of `database` has (k0 … k{width-1})."""
    info = conn.execute(f"PRAGMA {quote(database)}.table_info({quote(CHANGE_LOG)})").fetchall()
    return sum(1 for row in info if str(row[1]).startswith("k"))


def _replaces_other_rows(conn: sqlite3.Connection, table: TableSchema) -> bool:
    """Whether a REPLACE on `table` can delete a row whose key differs from the new one's.

    Only a UNIQUE constraint other than the primary key can: a conflict on the key
    itself replaces the row under the same key, which the INSERT trigger logs anyway.
    """
    indexes = conn.execute(f"PRAGMA index_list({quote(table.name)})").fetchall()
    return any(row[2] and row[3] != "pk" for row in indexes)


def nullable_key(conn: sqlite3.Connection, table: TableSchema) -> tuple[str, ...]:
    """The primary key columns of `table` in which SQLite itself would store a NULL."""
    if not table.has_rowid or table.keyed_by_rowid or rowid_alias(conn, table) is not None:
        return ()  # WITHOUT ROWID keys are NOT NULL; the rowid is assigned, never NULL
    info = conn.execute(f"PRAGMA table_info({quote(table.name)})").fetchall()
    declared_not_null = {row[1] for row in info if row[3]}
    return tuple(c for c in table.primary_key if c not in declared_not_null)


def install_change_capture(conn: sqlite3.Connection) -> None:
    """Create the change log and one INSERT/UPDATE/DELETE trigger per table, and empty the log.

    Idempotent, so a template derived from another (extra rows added to a copy) is
    built the same way; the log always ends empty, because a template's log must be.
    """
    tables = read_schema(conn).tables.values()
    width = max((len(t.primary_key) for t in tables), default=1)
    keys = ", ".join(f"k{i}" for i in range(width))
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {CHANGE_LOG} "
        f"(seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, rid, recursive, {keys})"
    )
    width = key_width(conn)
    for table in tables:
        triggers = change_log_triggers(
            table,
            CHANGE_LOG,
            width,
            check_recursive=_replaces_other_rows(conn, table),
            nullable_key=nullable_key(conn, table),
        )
        conn.executescript("".join(f"{trigger};\n" for trigger in triggers))
    conn.execute(f"DELETE FROM {CHANGE_LOG}")


def has_change_capture(conn: sqlite3.Connection, database: str = "main") -> bool:
    """Whether `database` carries the change log."""
    row = conn.execute(
        f"SELECT 1 FROM {quote(database)}.sqlite_master WHERE type = 'table' AND name = ?",
        (CHANGE_LOG,),
    ).fetchone()
    return row is not None


def capture_fingerprint(conn: sqlite3.Connection, database: str = "main") -> tuple[object, ...]:
    """The log table and every trigger as SQLite stores them.

    Equal in a run's initial and final state only if no table lost (or changed) its
    triggers during the run.
    """
    return tuple(
        conn.execute(
            f"SELECT type, name, tbl_name, sql FROM {quote(database)}.sqlite_master "
            "WHERE type = 'trigger' OR name = ? ORDER BY type, name",
            (CHANGE_LOG,),
        ).fetchall()
    )
