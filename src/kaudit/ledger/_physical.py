"""The ledger file's physical form: every schema object kaudit made, and nothing else.

The hash chain vouches for the rows, not for the file around them. A trigger can
delete each new damage row before the next append links past it; an index can be
swapped for one that leaves rows out, so that any read through it (a count, a lookup
by key) misses them while a walk by `seq` still sees every row. Neither changes a
hash. So before a chain is trusted, and before a writer appends to it, the file must
hold exactly the tables and indexes kaudit creates, each with kaudit's own SQL, no
trigger or view at all, and SQLite's integrity check must find every index in step
with its table.
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from kaudit.errors import LedgerError
from kaudit.ledger._schema import CLAIMS_SCHEMA, GRADES_SCHEMA, SCHEMA

__all__ = ["check_physical", "check_schema"]

REQUIRED = ("campaigns", "runs", "attempts", "dumps")
"""Tables every ledger has (format 1 and 2); `grades` and `spool_claims` come when used."""


@functools.cache
def _expected() -> dict[tuple[str, str], tuple[str, str | None]]:
    """(type, name) -> (table, SQL) of every object a current ledger may hold."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA + GRADES_SCHEMA + CLAIMS_SCHEMA)
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        columns = {table: _columns(conn, table) for kind, _, table, _ in rows if kind == "table"}
    finally:
        conn.close()
    _COLUMNS.update(columns)
    return {(kind, name): (table, sql) for kind, name, table, sql in rows}


_COLUMNS: dict[str, tuple[str, ...]] = {}
"""Each kaudit table's columns in order, as `_expected` found them."""


def _columns(conn: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})"))


def check_schema(conn: sqlite3.Connection, path: Path, file_format: int) -> None:
    """Raise LedgerError naming the first schema object kaudit would not have made.

    Only kaudit's tables, with kaudit's columns (format 1 lacks `attempt`), each with
    its unique key; only kaudit's indexes, an explicit one with kaudit's SQL byte for
    byte (a partial index under a kaudit name is refused); no trigger or view. Table
    SQL is not compared as text: a ledger upgraded from format 1 keeps the older text
    of the tables the upgrade did not rebuild.
    """
    expected = _expected()
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
    present = {}
    for kind, name, table, sql in rows:
        want = expected.get((kind, name))
        if want is None or want[0] != table:
            raise LedgerError(
                f"{path}: {kind} {name!r} on table {table!r} is not part of a kaudit ledger; "
                "a file holding schema objects kaudit did not make is refused"
            )
        if kind == "index" and want[1] is not None and want[1] != sql:
            raise LedgerError(
                f"{path}: index {name!r} is not defined as kaudit defines it "
                f"(it reads {' '.join(str(sql).split())!r})"
            )
        present[kind, name] = table
    for kind, name in expected:
        table = expected[kind, name][0]
        if ("table", table) not in present:
            if table in REQUIRED:
                raise LedgerError(f"{path}: table {table!r} is missing: not a whole kaudit ledger")
            continue
        if (kind, name) not in present and (kind == "table" or name.startswith("sqlite_")):
            raise LedgerError(
                f"{path}: table {table!r} lacks its unique key ({name}): it was rebuilt"
            )
    for (kind, table), _ in present.items():
        if kind == "table":
            _check_columns(conn, path, table, file_format)


def _check_columns(conn: sqlite3.Connection, path: Path, table: str, file_format: int) -> None:
    want = _COLUMNS[table]
    if file_format < 2 and table in ("runs", "dumps"):
        want = tuple(column for column in want if column != "attempt")
    have = _columns(conn, table)
    if have != want:
        raise LedgerError(
            f"{path}: table {table!r} has columns {', '.join(have)}, not kaudit's {', '.join(want)}"
        )


def check_physical(conn: sqlite3.Connection, path: Path, file_format: int) -> None:
    """`check_schema`, then SQLite's integrity check over the whole file.

    `PRAGMA integrity_check` (not the quick check) compares every index with its
    table, so an index that leaves rows out is named here, before a reader counts
    anything through it.
    """
    check_schema(conn, path, file_format)
    try:
        problem = str(conn.execute("PRAGMA integrity_check(1)").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        problem = str(exc)
    if problem != "ok":
        raise LedgerError(
            f"{path}: the file fails SQLite's integrity check ({problem}): an index or page "
            "disagrees with its table"
        )
