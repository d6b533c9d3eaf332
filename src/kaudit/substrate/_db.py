"""`SqliteDb`: the `Db` handle (`kaudit.tools.Db`) over a SQLite sandbox's connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from kaudit.tools import DatabaseError


class StatementHooks(Protocol):
    """How a sandbox runs a tool's statements under its gate (see `substrate._pool`)."""

    def run(self, sql: str, params: tuple[Any, ...], depth: int) -> sqlite3.Cursor:
        """Run a tool's `sql` at `atomic()` depth `depth`; raises `SubstrateError` if refused."""
        ...

    def open(self, depth: int) -> None:
        """Called before `atomic()` opens its savepoint at `depth`."""
        ...


class SqliteDb:
    """`Db` over one sqlite3 connection owned by a single sandbox.

    The connection runs in autocommit mode (`isolation_level=None`): a statement outside
    `atomic()` commits at once, so a crash between tool calls never leaves an open
    transaction that would hide committed agent writes from the dump. A sandbox passes
    `hooks`, which run each statement under its gate (and, pooled, keep that behaviour
    inside the run's transaction).
    """

    def __init__(self, conn: sqlite3.Connection, hooks: StatementHooks | None = None) -> None:
        conn.isolation_level = None
        self.conn = conn
        self.hooks = hooks
        self._depth = 0

    @property
    def depth(self) -> int:
        """How many `atomic()` blocks are open."""
        return self._depth

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts in column order."""
        cursor = self._run(sql, params)
        names = [column[0] for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of a SELECT, or None."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one write statement; returns the affected row count."""
        return self._run(sql, params).rowcount

    def _run(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        try:
            if self.hooks is None:
                return self.conn.execute(sql, tuple(params))
            return self.hooks.run(sql, tuple(params), self._depth)
        except sqlite3.Error as exc:
            raise DatabaseError(
                str(exc), integrity=isinstance(exc, sqlite3.IntegrityError)
            ) from exc

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Commit together or roll back together (nested calls become savepoints).

        Guards against a tool that writes several rows and fails half-way: the agent
        then sees an error *and* an unchanged state, so a half-applied action never
        reaches the labeler as if the agent had chosen it.
        """
        name = f"kaudit_{self._depth}"
        if self.hooks is not None:
            self.hooks.open(self._depth)
        self.conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._undo(name)
            raise
        else:
            self._release(name)
        finally:
            self._depth -= 1

    def _release(self, name: str) -> None:
        """RELEASE the savepoint; when that fails, the block is undone and the tool told.

        The outermost RELEASE commits, and a commit can refuse (a foreign key checked
        at commit under `PRAGMA defer_foreign_keys`): the transaction then stays open,
        so it is rolled back to the savepoint, leaving the state as before the block.
        """
        try:
            self.conn.execute(f"RELEASE {name}")
        except sqlite3.Error as exc:
            self._undo(name)
            raise DatabaseError(
                str(exc), integrity=isinstance(exc, sqlite3.IntegrityError)
            ) from exc

    def _undo(self, name: str) -> None:
        self.conn.execute(f"ROLLBACK TO {name}")
        self.conn.execute(f"RELEASE {name}")
