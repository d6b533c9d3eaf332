"""The boundary on SQLite: a grant on the statement gate, temp triggers for the scope.

A SQLite sandbox brings it (`SqliteSandbox.guard`), as every substrate brings its own.

Both live on the sandbox connection only. The grant, asked by the connection's one
authorizer (`substrate.StatementGate`) after the sandbox's own rules, refuses a
statement that reads or writes a table outside the identity's grant while it is being
compiled; the gate keeps what it compiled for the next run with the same identity and
compiles everything again for another one; the scope
triggers abort a write to a row outside the scope (before or after): one whose scope
column holds another value, or, in a table without the column, one that belongs to such
a row through its foreign keys (`_ownership`). Temp triggers sit in the connection's
`temp` schema, so they are never part of the dumped state and cost no template change.
The trigger script depends only on the template's schema, the world's declared keys and
the identity's scope, so it is built once per template and scope, and a pooled sandbox
keeps the triggers between runs that need the same script
(`SqliteSandbox.hold_script`). The agent's SQL may not drop them: that would lift the
scope for the rest of the run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from kaudit.spec import Identity, TableOp
from kaudit.substrate._gate import gate_of
from kaudit.substrate._ownership import Coverage, coverage
from kaudit.substrate._pool import register_function
from kaudit.substrate._protocol import Denial
from kaudit.substrate._schema import (
    INTERNAL_PREFIX,
    ForeignKey,
    Schema,
    TableSchema,
    quote,
    read_schema,
)
from kaudit.substrate._triggers import scope_triggers

_OPS: dict[int, TableOp] = {
    sqlite3.SQLITE_READ: "read",
    sqlite3.SQLITE_INSERT: "insert",
    sqlite3.SQLITE_UPDATE: "update",
    sqlite3.SQLITE_DELETE: "delete",
}
_GUARD_PREFIX = "kaudit_scope_"
_NOTE = "kaudit_boundary_note"
_NAMED_DDL = frozenset(
    {
        sqlite3.SQLITE_DROP_TEMP_TRIGGER,
        sqlite3.SQLITE_DROP_TRIGGER,
        sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
        sqlite3.SQLITE_CREATE_TRIGGER,
        sqlite3.SQLITE_CREATE_TEMP_VIEW,
        sqlite3.SQLITE_CREATE_VIEW,
    }
)
"""DDL whose first argument names the trigger or view made or dropped."""
_SCRIPTS: dict[tuple[str, tuple[tuple[str, str], ...], tuple[ForeignKey, ...]], str] = {}
_SCRIPTS_KEPT = 256
"""Scope scripts kept per process, by (template digest, scope, declared keys): a few per task."""


class SqliteGuard:
    """Installs the identity's boundary on one sandbox connection and notes each denial.

    `install` runs the scope-trigger script and returns the connection that holds it (a
    pooled sandbox may already hold it, or move to an idle connection that does);
    `template` names the schema the connection starts from, so the script is built once
    per template and scope. Without them the script is built and run on `conn` directly.
    `ownership` adds the keys the world declares for a schema that declares none.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        identity: Identity,
        *,
        install: Callable[[str], sqlite3.Connection] | None = None,
        template: str | None = None,
        ownership: Sequence[ForeignKey] = (),
    ) -> None:
        self.identity = identity
        self._declared = tuple(ownership)
        self.denials: list[Denial] = []
        self._bounded = identity.tables is not None or bool(identity.scope)
        self._conn = conn
        with gate_of(conn).trusted():
            script = self._scope_script(template)
            # Run even when the script is empty: it replaces another identity's triggers
            # a pooled connection may hold, before the grant below forbids dropping them.
            # A pooled sandbox may move to a connection that already holds the script.
            conn = install(script) if install is not None else _run_script(conn, script)
        self._conn = conn
        register_function(conn, _NOTE, 3, self._note_scope)  # withdrawn when the run ends
        gate_of(conn).arm(conn, self._authorize, identity)

    def take(self) -> list[Denial]:
        """The denials since the last call, deduplicated in order."""
        found = list(dict.fromkeys(self.denials))
        self.denials.clear()
        return found

    def enter(self) -> None:
        """Nothing to switch: the authorizer and triggers are on for the whole connection."""

    def leave(self) -> None:
        """Nothing to switch back."""

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        op = _OPS.get(action)
        if op is None:
            return self._authorize_other(action, arg1, arg2)
        if arg1 is None or db == "temp":
            return sqlite3.SQLITE_OK
        if arg1.startswith(("sqlite_", INTERNAL_PREFIX)):
            return sqlite3.SQLITE_OK
        if source is not None and source.startswith((INTERNAL_PREFIX, _GUARD_PREFIX)):
            return sqlite3.SQLITE_OK  # kaudit's own triggers (change log, scope guard)
        if self.identity.allows(arg1, op):
            return sqlite3.SQLITE_OK
        self.denials.append(Denial(arg1, None, f"role {self.identity.role} may not {op} {arg1}"))
        return sqlite3.SQLITE_DENY

    def _authorize_other(self, action: int, arg1: str | None, arg2: str | None) -> int:
        """Refuse what would lift the scope; allow every other non-table action.

        The scope's own triggers may not be dropped, and no trigger or view may be made
        under their prefix (the table check trusts statements run by such a trigger).
        `PRAGMA recursive_triggers = OFF` would let `INSERT OR REPLACE` delete a row of
        another scope without firing the delete trigger that guards it. Under a table
        grant or a scope, ALTER TABLE is refused: the grant is checked by table name, so
        renaming tables would swap their rights, and dropping a column changes the rows
        of every scope and of tables outside the grant.
        """
        reason: str | None = None
        if action in _NAMED_DDL and (arg1 or "").startswith(_GUARD_PREFIX):
            reason = f"the scope triggers of role {self.identity.role} cannot be changed"
        elif action == sqlite3.SQLITE_PRAGMA and _sets(arg1, arg2, "recursive_triggers"):
            reason = f"role {self.identity.role} may not turn recursive triggers off"
        elif action == sqlite3.SQLITE_ALTER_TABLE and self._bounded:
            reason = f"role {self.identity.role} may not alter table {arg2}"
        if reason is None:
            return sqlite3.SQLITE_OK
        table = (
            arg2
            if action in (sqlite3.SQLITE_DROP_TEMP_TRIGGER, sqlite3.SQLITE_ALTER_TABLE)
            else None
        )
        self.denials.append(Denial(table or "", None, reason))
        return sqlite3.SQLITE_DENY

    def _note_scope(self, table: str, key: str, column: str) -> int:
        value = self.identity.scope[column]
        reason = f"row outside the {column} = {value} scope of role {self.identity.role}"
        self.denials.append(Denial(table, key, reason))
        return 0

    def _scope_script(self, template: str | None) -> str:
        """The scope triggers for this identity on `template`'s schema, built once per pair."""
        key = (template or "", tuple(sorted(self.identity.scope.items())), self._declared)
        script = _SCRIPTS.get(key) if template is not None else None
        if script is None:
            schema = read_schema(self._conn)
            fks = [*sqlite_foreign_keys(self._conn, schema), *self._declared]
            parts: list[str] = []
            for column, value in self.identity.scope.items():
                covered = coverage(schema, column, value, fks)
                if covered is None:
                    continue
                for name in sorted(covered.scoped | set(covered.owners)):
                    parts.extend(_scope_triggers(schema.tables[name], covered))
            script = "\n".join(parts)
            if template is not None:
                if len(_SCRIPTS) >= _SCRIPTS_KEPT:
                    _SCRIPTS.clear()
                _SCRIPTS[key] = script
        return script


def _run_script(conn: sqlite3.Connection, script: str) -> sqlite3.Connection:
    """Run `script` on `conn` itself (a sandbox that is not pooled)."""
    conn.executescript(script)
    return conn


def _sets(pragma: str | None, value: str | None, name: str) -> bool:
    """Whether a PRAGMA action sets `name` (reading it passes no value)."""
    return value is not None and (pragma or "").lower() == name


def sqlite_foreign_keys(conn: sqlite3.Connection, schema: Schema) -> list[ForeignKey]:
    """Every foreign key of `schema`'s tables, as `_referential` and `_ownership` read them.

    A key naming no parent columns is spelled out as the parent's primary key, which is
    what SQLite matches it against.
    """
    found: list[ForeignKey] = []
    for table in schema.tables.values():
        rows = conn.execute(f"PRAGMA foreign_key_list({quote(table.name)})").fetchall()
        by_id: dict[int, list[tuple[object, ...]]] = {}
        for row in rows:
            by_id.setdefault(int(row[0]), []).append(tuple(row))
        for parts in by_id.values():
            parts.sort(key=lambda r: int(str(r[1])))
            parent = str(parts[0][2])
            child_columns = tuple(str(r[3]) for r in parts)
            parent_columns = tuple(str(r[4]) for r in parts if r[4] is not None)
            if not parent_columns and parent in schema.tables:
                parent_columns = schema.tables[parent].primary_key
            if len(parent_columns) != len(child_columns):
                continue  # a key SQLite itself would reject on use
            found.append(
                ForeignKey(
                    table.name,
                    child_columns,
                    parent,
                    parent_columns,
                    _ACTION.get(str(parts[0][6]).upper(), "none"),
                    _ACTION.get(str(parts[0][5]).upper(), "none"),
                )
            )
    return found


_ACTION = {"CASCADE": "cascade", "SET NULL": "set_null", "SET DEFAULT": "set_default"}


def _scope_triggers(table: TableSchema, covered: Coverage) -> list[str]:
    """The scope's guard triggers on `table`, each a statement of the scope script."""
    triggers = scope_triggers(
        table.name,
        table.primary_key,
        covered.column,
        name_prefix=_GUARD_PREFIX,
        outside=lambda row: covered.outside_sql(table.name, row),
        note=_NOTE,
        reason="outside the permission boundary",
    )
    return [f"{trigger};" for trigger in triggers]
