"""The boundary on PostgreSQL: a role for the table grant, row-level security for the scope.

Every identity runs as one cluster-wide role without privileges of its own
(`kaudit_identity`); each run grants it, in the run's own database, exactly the table
operations the identity allows, and enables row-level security with policies that pin
the scope columns. The run's connection switches to the role (`SET ROLE`) only while a
tool call runs, so seeding, the dump and cleanup keep the owner's view. All of it lives
in the run database (dropped after the run) or inside the run's transaction (rolled back
with `?reset=rollback`), so the template never changes.

A refused write raises SQLSTATE 42501: "permission denied for table ..." for the grant,
or the boundary's own message for a row outside the scope, raised by the policy
expression with the table, the row's key and the column in its detail, so the attempt
is recorded with the same (table, key) as on SQLite.

Limits: the policy of an UPDATE or DELETE is checked on the rows the statement reads; a
tool whose WHERE clause uses a non-leakproof function may be checked against rows its
clause would have skipped. Cascaded foreign-key actions run as the table owner and are
not checked, as row-level security never applies to them.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from typing import Any

import psycopg
from psycopg import sql

from kaudit.boundary._sqlite import Denial
from kaudit.errors import SubstrateError
from kaudit.spec import Identity, TableOp
from kaudit.substrate import INTERNAL_PREFIX, Schema
from kaudit.substrate._pg_conn import connect, redacted
from kaudit.substrate._pg_db import PostgresDb

ROLE = "kaudit_identity"
"""The role every identity runs as; its privileges exist only inside run databases."""

_REFUSE = "kaudit_scope_refuse"
_MESSAGE = "outside the permission boundary"
_PRIVILEGES: dict[TableOp, str] = {
    "read": "SELECT",
    "insert": "INSERT",
    "update": "UPDATE",
    "delete": "DELETE",
}
_VERBS: dict[str, TableOp] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
_DENIED = re.compile(r"permission denied for table (.+)$")
_ROLES: set[str] = set()
"""Servers this process has already created the role on."""
_ROLES_LOCK = threading.Lock()


def ensure_role(server: str) -> str:
    """Create the identity role on `server` once; concurrent creators do not fail."""
    with _ROLES_LOCK:
        if server in _ROLES:
            return ROLE
    try:
        with connect(server) as admin:
            admin.execute(
                "DO $$ BEGIN CREATE ROLE kaudit_identity NOLOGIN; "
                "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
            )
    except psycopg.Error as exc:
        raise SubstrateError(
            f"PostgreSQL at {redacted(server)}: cannot create role {ROLE}: {exc}"
        ) from None
    with _ROLES_LOCK:
        _ROLES.add(server)
    return ROLE


class PostgresGuard:
    """Installs the identity's boundary in one run database and notes each refusal."""

    def __init__(self, db: PostgresDb, identity: Identity, server: str, schema: Schema) -> None:
        self.identity = identity
        self.denials: list[Denial] = []
        self._db = db
        self._role = ensure_role(server)
        try:
            self._install(schema)
        except psycopg.Error as exc:
            raise SubstrateError(f"the boundary cannot be installed: {exc}") from None
        db.on_error = self._note

    def take(self) -> list[Denial]:
        """The denials since the last call, deduplicated in order."""
        found = list(dict.fromkeys(self.denials))
        self.denials.clear()
        return found

    def enter(self) -> None:
        """Act as the identity's role for the statements of one call."""
        self._db.conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(self._role)))

    def leave(self) -> None:
        """Back to the owner (a rolled-back call has already undone the switch)."""
        # A broken run transaction cannot reset; the run's close drops its database.
        with contextlib.suppress(psycopg.Error):
            self._db.conn.execute("RESET ROLE")

    def _install(self, schema: Schema) -> None:
        conn = self._db.conn
        role = sql.Identifier(self._role)
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {_REFUSE}(t text, k text, c text) RETURNS boolean "
            "LANGUAGE plpgsql COST 10000 AS $$ BEGIN RAISE EXCEPTION USING "
            f"ERRCODE = '42501', MESSAGE = '{_MESSAGE}', "
            "DETAIL = json_build_array(t, k, c)::text; END $$"
        )
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
        for name in _internal_tables(conn):
            conn.execute(sql.SQL("GRANT ALL ON TABLE {} TO {}").format(sql.Identifier(name), role))
        for table in schema.tables.values():
            ident = sql.Identifier(table.name)
            ops = [op for op in _PRIVILEGES if self.identity.allows(table.name, op)]
            if ops:
                privileges = sql.SQL(", ").join(sql.SQL(_PRIVILEGES[op]) for op in ops)
                conn.execute(sql.SQL("GRANT {} ON TABLE {} TO {}").format(privileges, ident, role))
            scoped = [c for c in self.identity.scope if c in table.columns]
            if scoped:
                self._policies(table.name, table.primary_key, scoped)

    def _policies(self, table: str, key: tuple[str, ...], columns: list[str]) -> None:
        conn = self._db.conn
        ident, role = sql.Identifier(table), sql.Identifier(self._role)
        key_sql = sql.SQL("json_build_array({})::text").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in key)
        )
        check = sql.SQL(" AND ").join(
            sql.SQL("({col} IS NOT DISTINCT FROM {value} OR {refuse}({t}, {k}, {c}))").format(
                col=sql.Identifier(c),
                value=sql.Literal(self.identity.scope[c]),
                refuse=sql.Identifier(_REFUSE),
                t=sql.Literal(table),
                k=key_sql,
                c=sql.Literal(c),
            )
            for c in columns
        )
        statements = [
            "ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY kaudit_read ON {t} FOR SELECT TO {r} USING (true)",
            "CREATE POLICY kaudit_insert ON {t} FOR INSERT TO {r} WITH CHECK ({x})",
            "CREATE POLICY kaudit_update ON {t} FOR UPDATE TO {r} USING ({x}) WITH CHECK ({x})",
            "CREATE POLICY kaudit_delete ON {t} FOR DELETE TO {r} USING ({x})",
        ]
        for statement in statements:
            conn.execute(sql.SQL(statement).format(t=ident, r=role, x=check))

    def _note(self, exc: psycopg.Error, statement: str) -> None:
        """Record a refusal the database raised; any other error is the tool's own."""
        if exc.sqlstate != "42501" or exc.diag is None:
            return
        message = exc.diag.message_primary or ""
        if message == _MESSAGE and exc.diag.message_detail:
            table, key, column = json.loads(exc.diag.message_detail)
            value = self.identity.scope[column]
            reason = f"row outside the {column} = {value} scope of role {self.identity.role}"
            self.denials.append(Denial(table, sqlite_json(key), reason))
            return
        denied = _DENIED.match(message)
        if denied is not None:
            table = denied.group(1)
            verb = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else ""
            op = _VERBS.get(verb, "read")
            if self.identity.allows(table, op):
                op = "read"  # the write was allowed; what it read was not
            reason = f"role {self.identity.role} may not {op} {table}"
            self.denials.append(Denial(table, None, reason))


def sqlite_json(text: str) -> str:
    """A key array as SQLite's json_array writes it (no spaces), so both substrates agree."""
    return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)


def _internal_tables(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "AND starts_with(tablename, %s) ORDER BY 1",
        (INTERNAL_PREFIX,),
    ).fetchall()
    return [name for (name,) in rows]
