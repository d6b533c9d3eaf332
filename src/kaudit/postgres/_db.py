"""`Db` over one psycopg connection: the same `?` SQL tools write for SQLite."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from kaudit.errors import SubstrateError
from kaudit.substrate import DatabaseError

_IS = re.compile(r"\bIS(\s+NOT)?\s+$", re.IGNORECASE)
_INTERNAL = re.compile(r"_kaudit_", re.IGNORECASE)
_READ = re.compile(r"\s*(SELECT|VALUES)\b(?!.*\b(INTO|FOR\s+UPDATE)\b)", re.IGNORECASE | re.DOTALL)


def pg_placeholders(sql: str) -> str:
    """`sql` with each `?` outside quotes turned into psycopg's `%s` and `%` doubled.

    Tools write SQLite's `?` placeholders; quoted text ('a?b') and quoted identifiers
    keep their question marks, and a literal `%` (as in LIKE 'a%') must not be read
    as a placeholder by psycopg. SQLite's `x IS ?` (NULL-safe equality) becomes
    `x IS NOT DISTINCT FROM %s`, and `IS NOT ?` becomes `IS DISTINCT FROM %s`.
    """
    out: list[str] = []
    quote: str | None = None
    for char in sql:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "?":
            before = "".join(out)
            negated = _IS.search(before)
            if negated is not None:
                keyword = "IS DISTINCT FROM " if negated.group(1) else "IS NOT DISTINCT FROM "
                out = [before[: negated.start()], keyword]
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


def database_error(exc: psycopg.Error) -> DatabaseError:
    """The substrate-neutral error for a statement PostgreSQL refused."""
    message = (exc.diag.message_primary if exc.diag else None) or str(exc)
    return DatabaseError(message, integrity=isinstance(exc, pg_errors.IntegrityError))


class PostgresDb:
    """`Db` over one autocommit psycopg connection owned by a single sandbox.

    Autocommit for the same reason as `SqliteDb`: a statement outside `atomic()`
    commits at once, so a crash between tool calls never leaves an open transaction
    that would hide committed agent writes from the dump.
    """

    def __init__(
        self, conn: psycopg.Connection[Any], *, statement_savepoints: bool = False
    ) -> None:
        conn.autocommit = True
        self.conn = conn
        self.depth = 0
        """How many `atomic()` blocks are open."""
        self._savepoints = statement_savepoints
        self.broken: str | None = None
        """Why the run's state cannot be trusted (it wrote kaudit's change log), if so."""
        self.on_error: Callable[[psycopg.Error, str], None] | None = None
        """Told of every refused statement (the boundary notes permission errors)."""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts in column order."""
        with self.conn.cursor() as cursor:
            self._run(cursor, sql, params)
            names = [column.name for column in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of a SELECT, or None."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one write statement; returns the affected row count."""
        with self.conn.cursor() as cursor:
            self._run(cursor, sql, params)
            return cursor.rowcount

    def _run(self, cursor: psycopg.Cursor[Any], sql: str, params: Sequence[Any]) -> None:
        if _INTERNAL.search(sql) and not _READ.match(sql):
            # The dump trusts the change log to name every touched row; a statement that
            # could empty it makes the run INVALID rather than hide its writes.
            self.broken = f"a sandbox cannot run {sql.strip()[:60]!r}: it names kaudit's own tables"
            raise SubstrateError(self.broken)
        try:
            if self._savepoints:
                # Inside a run-long transaction a failed statement would abort every later
                # one; its own savepoint makes it fail alone, as it does in autocommit.
                with self.conn.transaction():
                    cursor.execute(pg_placeholders(sql).encode(), tuple(params))
            else:
                cursor.execute(pg_placeholders(sql).encode(), tuple(params))
        except psycopg.Error as exc:
            if self.on_error is not None:
                self.on_error(exc, sql)
            raise database_error(exc) from exc

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Commit together or roll back together (nested calls become savepoints).

        Guards against a tool that writes several rows and fails half-way: the agent
        then sees an error *and* an unchanged state, as on SQLite.
        """
        self.depth += 1
        try:
            with self.conn.transaction():
                yield
        except psycopg.Error as exc:  # raised at COMMIT, e.g. by a deferred constraint
            raise database_error(exc) from exc
        finally:
            self.depth -= 1
