"""Change capture: triggers that log which rows a run touched, baked into the template.

The labeler then visits only touched rows instead of every table. The traps this
closes: `INSERT OR REPLACE` deletes without firing delete triggers unless
`PRAGMA recursive_triggers = ON` (every sandbox connection sets it); DDL fires no
trigger, so the labeler compares schemas too; the log table is internal (never
dumped as state, never reachable by a tool). The full diff stays the reference and
property tests prove both paths equal.
"""

from __future__ import annotations

import sqlite3

from kaudit.substrate._schema import INTERNAL_PREFIX, TableSchema, quote, read_schema

CHANGE_LOG = f"{INTERNAL_PREFIX}changes"


def _key_expr(table: TableSchema, alias: str) -> str:
    return "json_array(" + ", ".join(f"{alias}.{quote(c)}" for c in table.primary_key) + ")"


def install_change_capture(conn: sqlite3.Connection) -> None:
    """Create the change log and one INSERT/UPDATE/DELETE trigger per table, and empty the log.

    Idempotent, so a template derived from another (extra rows added to a copy) is
    built the same way; the log always ends empty, because a template's log must be.
    """
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {CHANGE_LOG} "
        "(seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk TEXT NOT NULL)"
    )
    for table in read_schema(conn).tables.values():
        name = quote(table.name)
        log = f"INSERT INTO {CHANGE_LOG}(tbl, pk) VALUES ({_sql_text(table.name)}, "
        new_key, old_key = _key_expr(table, "NEW"), _key_expr(table, "OLD")
        ins, dele, upd = (
            quote(f"{INTERNAL_PREFIX}{kind}_{table.name}") for kind in ("ins", "del", "upd")
        )
        conn.executescript(
            f"""
            CREATE TRIGGER IF NOT EXISTS {ins} AFTER INSERT ON {name}
            BEGIN {log}{new_key}); END;
            CREATE TRIGGER IF NOT EXISTS {dele} AFTER DELETE ON {name}
            BEGIN {log}{old_key}); END;
            CREATE TRIGGER IF NOT EXISTS {upd} AFTER UPDATE ON {name}
            BEGIN {log}{old_key}); {log}{new_key}); END;
            """
        )
    conn.execute(f"DELETE FROM {CHANGE_LOG}")


def has_change_capture(conn: sqlite3.Connection, database: str = "main") -> bool:
    """Whether `database` carries the change log."""
    row = conn.execute(
        f"SELECT 1 FROM {quote(database)}.sqlite_master WHERE type = 'table' AND name = ?",
        (CHANGE_LOG,),
    ).fetchone()
    return row is not None


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
