"""Events from production: wrap one transaction, label what it changed with the task's spec.

Inside `watch_transaction`, temporary triggers on the caller's connection (installed on
first use, inactive between watches, removed by `release_watch`) copy each row
the transaction is about to change or delete (its value before the transaction) and
log the key of each row it inserts. On success, the touched rows before and after are
written into two small SQLite images with the tables' own DDL, and the same labeler
that judges audit runs (`kaudit.label.label_run`) diffs them against the task's damage
spec. Untouched rows are never read, so the cost follows the transaction, not the table.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from kaudit.errors import KauditError
from kaudit.label import RunMeta, Verdict, label_run
from kaudit.monitor._events import Event
from kaudit.spec import Task
from kaudit.substrate import quote, read_schema
from kaudit.substrate._schema import TableSchema
from kaudit.substrate._triggers import Event as RowEvent
from kaudit.substrate._triggers import column_list, watch_triggers

_BEFORE = "_kaudit_mon_before_"
_NEW = "_kaudit_mon_new_"
_STATE = "_kaudit_mon_state"
_TOUCHED = "_kaudit_mon_touched"


@dataclass
class Watch:
    """Filled in when the watched transaction commits: its verdict and its event.

    `event` is None until then, and stays None if the transaction raised (it was rolled
    back, so nothing changed).
    """

    task: str
    model: str
    group: str | None = None
    time: str | float | None = None
    verdict: Verdict | None = field(default=None, repr=False)
    event: Event | None = None


def _key_columns(table: TableSchema) -> tuple[str, ...]:
    return table.primary_key


def _schema_digest(tables: Mapping[str, TableSchema]) -> str:
    text = "\0".join(f"{t.name}\0{t.sql}" for t in tables.values())
    return hashlib.sha256(text.encode()).hexdigest()


def _ensure_installed(conn: sqlite3.Connection, tables: Mapping[str, TableSchema]) -> None:
    """Install the capture triggers once per connection and schema; they stay, inactive.

    Creating and dropping a trigger pair per table on every transaction costs more than
    the transaction; installed once, a watch only flips the `active` flag.
    """
    digest = _schema_digest(tables)
    if conn.execute(f"SELECT 1 FROM sqlite_temp_master WHERE name = '{_STATE}'").fetchone():
        if conn.execute(f"SELECT digest FROM temp.{_STATE}").fetchone() == (digest,):
            return
        release_watch(conn)
    conn.execute(f"CREATE TEMP TABLE {_STATE} (digest TEXT, active INTEGER, tables INTEGER)")
    conn.execute(f"CREATE TEMP TABLE {_TOUCHED} (n INTEGER PRIMARY KEY)")
    for n, table in enumerate(tables.values()):
        _install_table(conn, n, table)
    conn.execute(f"INSERT INTO temp.{_STATE} VALUES (?, 0, ?)", (digest, len(tables)))
    if conn.in_transaction:  # the INSERT above opened one under Python's implicit BEGIN
        conn.commit()


def _install_table(conn: sqlite3.Connection, n: int, table: TableSchema) -> None:
    """Temp tables and triggers that copy each row's first pre-transaction value.

    A row inserted by this transaction and changed again later had no value before it,
    so its key goes to the `new` log and the before-copy skips it.
    """
    key = _key_columns(table)
    stored = (*key, *(c for c in table.columns if c not in key))
    # Unqualified in the trigger bodies: SQLite refuses schema-qualified targets there,
    # and an unqualified name resolves to the temp schema first.
    before, new = f"{_BEFORE}{n}", f"{_NEW}{n}"
    primary = f"PRIMARY KEY ({column_list(key)})"
    conn.execute(f"CREATE TEMP TABLE {before} ({column_list(stored)}, {primary})")
    conn.execute(f"CREATE TEMP TABLE {new} ({column_list(key)}, {primary})")
    names: dict[RowEvent, str] = {
        "UPDATE": f"{_BEFORE}UPDATE_{n}",
        "DELETE": f"{_BEFORE}DELETE_{n}",
        "INSERT": f"{_NEW}INSERT_{n}",
    }
    active = f"(SELECT active FROM {_STATE})"
    triggers = watch_triggers(
        table, names=names, before=before, new=new, touched=(_TOUCHED, n), active=active
    )
    for trigger in triggers:
        conn.execute(trigger)


def release_watch(conn: sqlite3.Connection) -> None:
    """Remove the capture triggers and tables `watch_transaction` left on `conn`.

    They are temporary (gone when the connection closes) and inactive between watches;
    call this to drop them sooner, e.g. before handing the connection to other code.
    """
    row = None
    if conn.execute(f"SELECT 1 FROM sqlite_temp_master WHERE name = '{_STATE}'").fetchone():
        row = conn.execute(f"SELECT tables FROM temp.{_STATE}").fetchone()
    for n in range(row[0] if row else 0):
        for op in ("UPDATE", "DELETE"):
            conn.execute(f"DROP TRIGGER IF EXISTS temp.{_BEFORE}{op}_{n}")
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{_NEW}INSERT_{n}")
        conn.execute(f"DROP TABLE IF EXISTS temp.{_BEFORE}{n}")
        conn.execute(f"DROP TABLE IF EXISTS temp.{_NEW}{n}")
    conn.execute(f"DROP TABLE IF EXISTS temp.{_STATE}")
    conn.execute(f"DROP TABLE IF EXISTS temp.{_TOUCHED}")


def _touched(conn: sqlite3.Connection) -> set[int]:
    return {n for (n,) in conn.execute(f"SELECT n FROM temp.{_TOUCHED}")}


def _reset(conn: sqlite3.Connection, touched: set[int]) -> None:
    """Clear the copies and switch capture off, inside the transaction about to commit."""
    for n in touched:
        conn.execute(f"DELETE FROM temp.{_BEFORE}{n}")
        conn.execute(f"DELETE FROM temp.{_NEW}{n}")
    conn.execute(f"DELETE FROM temp.{_TOUCHED}")
    conn.execute(f"UPDATE temp.{_STATE} SET active = 0")


def _images(
    conn: sqlite3.Connection, tables: Mapping[str, TableSchema], touched: set[int]
) -> tuple[bytes, bytes]:
    """Before and after images holding only the touched rows, with the tables' own DDL.

    Untouched tables are left out of both images: they hold no change, and leaving them
    out keeps the labeler's work proportional to the transaction.
    """
    before_db, after_db = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    # An image with no table has no page to serialize; an untouched transaction still
    # gets one (empty) table on both sides, which diffs to nothing.
    included = touched or {0}
    try:
        for n, table in enumerate(tables.values()):
            if n not in included:
                continue
            key = _key_columns(table)
            stored = (*key, *(c for c in table.columns if c not in key))
            before_rows = conn.execute(
                f"SELECT {column_list(stored)} FROM temp.{_BEFORE}{n}"
            ).fetchall()
            on_key = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in key)
            # Driven from the small logs into the table's key index: never a table scan.
            after_rows = conn.execute(
                " UNION ".join(
                    f"SELECT {column_list(stored, 't.')} FROM temp.{log}{n} AS s "
                    f"JOIN main.{quote(table.name)} AS t ON {on_key}"
                    for log in (_BEFORE, _NEW)
                )
            ).fetchall()
            marks = ", ".join("?" * len(stored))
            for image, rows in ((before_db, before_rows), (after_db, after_rows)):
                image.execute(table.sql)
                image.executemany(
                    f"INSERT INTO {quote(table.name)} ({column_list(stored)}) VALUES ({marks})",
                    rows,
                )
        before_db.commit()
        after_db.commit()
        return before_db.serialize(), after_db.serialize()
    finally:
        before_db.close()
        after_db.close()


@contextmanager
def watch_transaction(
    conn: sqlite3.Connection,
    task: Task,
    *,
    model: str,
    group: str | None = None,
    time: str | float | None = None,
    volatile: Mapping[str, Collection[str]] | None = None,
) -> Iterator[Watch]:
    """Run the block as one transaction on `conn` and label its change with `task.damage`.

    The connection must not already be in a transaction (the watch owns the boundary:
    it begins, commits on success and rolls back if the block raises, in which case no
    event is produced); the block must not commit or roll back itself. The task's
    success checks are not run: production has no
    oracle, only the damage spec. Schema changes (DDL) inside the block are not seen:
    production code is expected to change rows, not tables. Example::

        with watch_transaction(conn, task, model="gpt-4o") as watch:
            conn.execute("UPDATE accounts SET status = 'closed' WHERE account_id = ?", (a,))
        print(watch.event.to_json())
    """
    if conn.in_transaction:
        raise KauditError("watch_transaction: the connection is already in a transaction")
    tables = read_schema(conn).tables
    _ensure_installed(conn, tables)
    recursive = conn.execute("PRAGMA recursive_triggers").fetchone()[0]
    # INSERT OR REPLACE deletes the old row without firing delete triggers unless
    # recursive triggers are on; its pre-transaction value would be lost.
    conn.execute("PRAGMA recursive_triggers = ON")
    watch = Watch(task=task.id, model=model, group=group, time=time)
    try:
        conn.execute("BEGIN")
        conn.execute(f"UPDATE temp.{_STATE} SET active = 1")
        try:
            yield watch
            touched = _touched(conn)
            initial, final = _images(conn, tables, touched)
            _reset(conn, touched)
        except BaseException:
            # Rolling back also empties the copies and switches capture off again:
            # the temp tables are part of the same transaction.
            conn.rollback()
            raise
        conn.commit()
    finally:
        conn.execute(f"PRAGMA recursive_triggers = {int(recursive)}")
    verdict = label_run(
        initial, final, task.damage, (), task.params, RunMeta(), volatile=volatile, fast=False
    )
    watch.verdict = verdict
    dollars = None if verdict.dollars is None else float(verdict.dollars)
    watch.event = Event(
        task=task.id,
        model=model,
        harm=verdict.counts_as_damage,
        time=time,
        group=group,
        dollars=dollars,
    )
