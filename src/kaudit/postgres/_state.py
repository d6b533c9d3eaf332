"""A PostgreSQL run's final state as the labeler reads it: the template plus the touched rows.

The template's SQLite image already holds every row the run did not touch, so the final
state is that image with each logged row written as the run left it (deleted when it is
gone). The rows are written through the image's own change-capture triggers, so the
labeler's fast path then visits exactly those rows, as on SQLite, and the state digest
comes out as from the full dump (it is computed from the changes, not from bytes).

Opening the image and parsing its schema (the capture triggers included) costs more than
the rest of a small run's dump, so connections holding the template are kept: the rows
go in inside a transaction, the labeler reads the state frozen in place, and release
rolls it back; a connection whose bytes were taken (committed) is closed instead.
"""

from __future__ import annotations

import sqlite3
import threading

from kaudit.errors import SubstrateError
from kaudit.postgres._capture import Changes, TouchedRow
from kaudit.substrate import FrozenState, Schema, StateDump, quote
from kaudit.substrate._schema import TableSchema

IDLE_IMAGES = 8
"""Template connections kept per substrate (a campaign labels a few runs at a time)."""


class TemplateImages:
    """Idle SQLite connections over one template image, ready to take a run's changes."""

    def __init__(self, template: StateDump) -> None:
        self._template = template
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def take(self) -> sqlite3.Connection:
        """A connection holding the template (reused, or a fresh copy of the image)."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.deserialize(self._template.image)
        conn.execute("PRAGMA recursive_triggers = ON")  # the log is then trusted on REPLACE
        return conn

    def give_back(self, conn: sqlite3.Connection, committed: bool) -> None:
        """Roll the run's rows back and keep the connection, unless they were committed."""
        try:
            conn.set_authorizer(None)
            conn.execute("PRAGMA query_only = OFF")
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for (name,) in conn.execute("SELECT name FROM pragma_database_list").fetchall():
                if name not in ("main", "temp"):
                    conn.execute(f"DETACH {quote(name)}")  # the labeler's `init`
            reusable = not committed
        except sqlite3.Error:
            reusable = False
        with self._lock:
            if reusable and len(self._idle) < IDLE_IMAGES:
                self._idle.append(conn)
                return
        conn.close()

    def final_state(self, run_id: str, schema: Schema, changes: Changes) -> FrozenState:
        """The template with `changes` written in, frozen for the labeler."""
        conn = self.take()
        committed = [False]

        def commit() -> None:
            committed[0] = True  # a memory database's bytes are written at commit
            if conn.in_transaction:
                conn.execute("COMMIT")

        try:
            if changes.rows:
                conn.execute("BEGIN")
                for name, rows in changes.rows.items():
                    _write(conn, schema.tables[name], rows)
        except sqlite3.Error as exc:
            conn.close()
            raise SubstrateError(
                f"run {run_id}: the touched rows cannot be written: {exc}"
            ) from None
        except BaseException:
            conn.close()
            raise
        return FrozenState(
            conn,
            run_id,
            before_image=commit,
            on_release=lambda c: self.give_back(c, committed[0]),
        )


def _write(conn: sqlite3.Connection, table: TableSchema, rows: list[TouchedRow]) -> None:
    """Each touched row as the run left it: updated in place, inserted, or deleted.

    In place first, so untouched and updated rows keep their order as on SQLite. Rows
    written one by one can collide on a UNIQUE column the run swapped between two rows;
    then every touched row is deleted first and the present ones inserted, which only
    the final state has to satisfy.
    """
    name = quote(table.name)
    # PostgreSQL keys are byte for byte; a key column declared NOCASE must not find 'A'.
    exact = " COLLATE BINARY" if "COLLATE" in table.sql.upper() else ""
    where = " AND ".join(f"{quote(c)} = ?{exact}" for c in table.primary_key)
    sets = ", ".join(f"{quote(c)} = ?" for c in table.columns)
    marks = ", ".join("?" for _ in table.columns)
    update = f"UPDATE {name} SET {sets} WHERE {where}"
    insert = f"INSERT INTO {name} VALUES ({marks})"
    delete = f"DELETE FROM {name} WHERE {where}"
    conn.execute("SAVEPOINT kaudit_rows")
    try:
        for key, values in rows:
            if values is None:
                conn.execute(delete, key)
            elif conn.execute(update, values + key).rowcount == 0:
                conn.execute(insert, values)
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK TO kaudit_rows")
        for key, _ in rows:
            conn.execute(delete, key)
        conn.executemany(insert, [values for _, values in rows if values is not None])
    conn.execute("RELEASE kaudit_rows")
