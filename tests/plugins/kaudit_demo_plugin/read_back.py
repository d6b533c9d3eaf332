"""The scratch substrate's own boundary: a call's writes are read back before it commits.

Neither SQLite's authorizer nor PostgreSQL's policies: nothing is refused while a
statement runs. `take()`, which kaudit's boundary layer calls inside the call's
transaction, compares every table with what it held at `enter()` and reports each
changed row outside the identity's scope or write grant; the layer then rolls the whole
call back and records one attempt per report, as it does for kaudit's own guards.
Written only against kaudit's public names, as a package outside kaudit would write it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from kaudit.errors import SubstrateError
from kaudit.spec import Identity, TableOp
from kaudit.substrate import Denial, Schema, quote, read_schema

Rows = dict[str, dict[tuple[object, ...], dict[str, object]]]
"""Table -> primary key -> the row, column by column."""


class ReadBackGuard:
    """Enforces `identity` on one connection by reading back what each call changed.

    Its scope covers the tables that carry a scope column; unlike kaudit's own guards it
    follows no foreign keys. Reads cannot be seen after the fact, so an identity that
    withholds `read` on a table is refused when the guard is made.
    """

    def __init__(self, conn: sqlite3.Connection, identity: Identity) -> None:
        self._conn = conn
        self._identity = identity
        self._schema: Schema = read_schema(conn)
        hidden = [t for t in self._schema.tables if not identity.allows(t, "read")]
        if hidden:
            raise SubstrateError(
                f"scratch: role {identity.role} withholds read on {hidden[0]}, "
                "which a read-back guard cannot enforce"
            )
        self._before: Rows | None = None
        self._denials: list[Denial] = []

    def enter(self) -> None:
        """Note every row as the call finds it."""
        self._before = self._rows()

    def leave(self) -> None:
        """Forget the call's rows."""
        self._before = None

    def take(self) -> list[Denial]:
        """What the call changed outside the identity's reach, deduplicated in order."""
        if self._before is not None:
            now = self._rows()
            self._check(self._before, now)
            self._before = now
        found = list(dict.fromkeys(self._denials))
        self._denials.clear()
        return found

    def _rows(self) -> Rows:
        rows: Rows = {}
        for table in self._schema.tables.values():
            found = self._conn.execute(
                f"SELECT {', '.join(map(quote, table.columns))} FROM {quote(table.name)}"
            )
            by_key: dict[tuple[object, ...], dict[str, object]] = {}
            for values in found.fetchall():
                row = dict(zip(table.columns, values, strict=True))
                by_key[tuple(row.get(c) for c in table.primary_key)] = row
            rows[table.name] = by_key
        return rows

    def _check(self, before: Rows, after: Rows) -> None:
        for table, old_rows in before.items():
            new_rows = after.get(table, {})
            for key in dict.fromkeys([*old_rows, *new_rows]):
                old, new = old_rows.get(key), new_rows.get(key)
                if old != new:
                    self._denials.extend(self._refusals(table, key, old, new))

    def _refusals(
        self,
        table: str,
        key: tuple[object, ...],
        old: dict[str, object] | None,
        new: dict[str, object] | None,
    ) -> Iterator[Denial]:
        """Why one changed row is out of reach: its operation, its scope before or after."""
        named = json.dumps(list(key), separators=(",", ":"), default=str)
        op: TableOp = "insert" if old is None else "delete" if new is None else "update"
        if not self._identity.allows(table, op):
            yield Denial(table, named, f"scratch: {self._identity.role} may not {op} {table}")
        for column, value in self._identity.scope.items():
            for row in (old, new):
                found = None if row is None else row.get(column, value)
                if row is not None and found != value:
                    reason = f"scratch: {table} {named} has {column} {found}, not {value}"
                    yield Denial(table, named, reason)
