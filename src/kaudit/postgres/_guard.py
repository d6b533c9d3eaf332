"""The boundary on PostgreSQL: a role for the table grant, row-level security for the scope.

A PostgreSQL sandbox brings it (`PreparedSandbox.guard`), so `kaudit.boundary` needs to
know nothing of PostgreSQL.

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

Cascaded foreign-key actions (ON DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT) run as
the table owner, so row-level security never sees them. On every table such an action
can change, triggers check the scope instead, firing only while a call runs as the
identity (`kaudit.identity` is on) and as someone else (the owner, i.e. inside the
cascade): a cascade into an out-of-scope row is refused with the same error and
(table, key) as on SQLite, whose scope triggers fire for cascades too.

A table without a scope column whose rows belong to scoped rows through foreign keys
(`_ownership`: an invoice line to its invoice) has no policy but a row trigger, for the
identity's statements and the owner's cascades alike, whose function reads the parents as
the owner: a write to a row that belongs to an out-of-scope row is refused with the same
error and (table, key) as on SQLite.

The table grant covers foreign keys as on SQLite, whose authorizer sees the checks and
actions a statement's keys add: a statement-level trigger refuses, before any row is
touched, a statement whose checks or actions need a right outside the grant
(`_referential`), with the same "permission denied for table ..." as the grant itself
and the operation the identity lacks in its detail. An UPSERT fires both its INSERT and
its UPDATE OF triggers, so it is checked for both, as SQLite checks it.

Limits: the policy of an UPDATE or DELETE is checked on the rows the statement reads; a
tool whose WHERE clause uses a non-leakproof function may be checked against rows its
clause would have skipped. A statement refused here records one attempt (the first
right it lacks), where SQLite's authorizer may record one per table it lacks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from kaudit.errors import SubstrateError
from kaudit.postgres._conn import connect, redacted
from kaudit.postgres._db import PostgresDb
from kaudit.postgres._referential import (
    ForeignKey,
    Need,
    delete_needs,
    insert_needs,
    update_needs,
)
from kaudit.spec import Identity, TableOp
from kaudit.substrate import Denial, Schema
from kaudit.substrate._ownership import Coverage, coverage
from kaudit.substrate._schema import INTERNAL_PREFIX

ROLE = "kaudit_identity"
"""The role every identity runs as; its privileges exist only inside run databases."""

_REFUSE = "kaudit_scope_refuse"
_CASCADE = "kaudit_scope_cascade"
_ACTIVE = "kaudit.identity"
"""The session setting that is 'on' exactly while a call runs as the identity."""
AGENT_ROLE_PREFIX = "kaudit_a_"
"""Login roles of agents' own SQL (`kaudit.postgres` makes one per run): their sessions
act as the identity for as long as they live, whatever they set."""
_AS_IDENTITY = (
    "(current_setting('kaudit.identity', true) = 'on' "
    f"OR starts_with(session_user, '{AGENT_ROLE_PREFIX}'))"
)
"""A trigger condition true while the identity acts: a call of kaudit's own tools, or
any statement of an agent's own login role (which could reset the setting)."""
_ACTING = f"{_AS_IDENTITY} AND current_user <> 'kaudit_identity'"
"""A trigger condition true only inside a cascade of the identity's statement."""
_CASCADING = """
SELECT DISTINCT c.relname FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid
WHERE f.contype = 'f' AND c.relnamespace = 'public'::regnamespace
  AND (f.confdeltype IN ('c', 'n', 'd') OR f.confupdtype IN ('c', 'n', 'd'))
"""
_GRANT_REFUSE = "kaudit_grant_refuse"
_FOREIGN_KEYS = """
SELECT c.relname, p.relname, f.confdeltype, f.confupdtype,
  ARRAY(SELECT a.attname::text FROM unnest(f.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.n ORDER BY k.i),
  ARRAY(SELECT a.attname::text FROM unnest(f.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid
WHERE f.contype = 'f' AND c.relnamespace = 'public'::regnamespace ORDER BY f.oid DESC
"""
_ACTIONS = {"c": "cascade", "n": "set_null", "d": "set_default", "a": "none", "r": "none"}
_MESSAGE = "outside the permission boundary"
_PRIVILEGES: dict[TableOp, str] = {
    "read": "SELECT",
    "insert": "INSERT",
    "update": "UPDATE",
    "delete": "DELETE",
}
_VERBS: dict[str, TableOp] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
_DENIED = re.compile(r"permission denied for table (.+)$")
_UPSERT = re.compile(r"\bON\s+CONFLICT\b.*\bDO\s+UPDATE\b", re.IGNORECASE | re.DOTALL)
"""An INSERT that may update: it also needs `update`, which SQLite asks for after `read`."""
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

    def __init__(
        self,
        db: PostgresDb,
        identity: Identity,
        server: str,
        schema: Schema,
        ownership: Sequence[ForeignKey] = (),
    ) -> None:
        self.identity = identity
        self._declared = tuple(ownership)
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
        role = sql.Identifier(self._role)
        self._db.conn.execute(sql.SQL(f"SET {_ACTIVE} = 'on'; SET ROLE {{}}").format(role))

    def leave(self) -> None:
        """Back to the owner (a rolled-back call has already undone the switch)."""
        # A broken run transaction cannot reset; the run's close drops its database.
        with contextlib.suppress(psycopg.Error):
            self._db.conn.execute(f"RESET ROLE; RESET {_ACTIVE}")

    def _install(self, schema: Schema) -> None:
        conn = self._db.conn
        role = sql.Identifier(self._role)
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {_REFUSE}(t text, k text, c text) RETURNS boolean "
            "LANGUAGE plpgsql COST 10000 AS $$ BEGIN RAISE EXCEPTION USING "
            f"ERRCODE = '42501', MESSAGE = '{_MESSAGE}', "
            "DETAIL = json_build_array(t, k, c)::text; END $$"
        )
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {_CASCADE}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "DECLARE r jsonb := to_jsonb(OLD); BEGIN "
            f"PERFORM {_REFUSE}(TG_TABLE_NAME, (SELECT jsonb_agg(r -> a ORDER BY n) "
            "FROM unnest(TG_ARGV[1:]) WITH ORDINALITY AS k(a, n))::text, TG_ARGV[0]); "
            "RETURN NULL; END $$"
        )
        cascading = {name for (name,) in conn.execute(_CASCADING).fetchall()}
        fks = [
            ForeignKey(child, tuple(cc), parent, tuple(pc), _ACTIONS[d], _ACTIONS[u])
            for child, parent, d, u, cc, pc in conn.execute(_FOREIGN_KEYS).fetchall()
        ]
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
            if scoped and table.name in cascading:
                self._cascade_triggers(table.name, table.primary_key, scoped)
        for column, value in self.identity.scope.items():
            covered = coverage(schema, column, value, [*fks, *self._declared])
            if covered is None:
                continue
            for name in sorted(covered.owners):
                owned = schema.tables[name]
                self._owned_trigger(owned.name, owned.primary_key, covered)
        if self.identity.tables is not None:
            self._referential_triggers(schema, fks)

    def _owned_trigger(self, table: str, key: tuple[str, ...], covered: Coverage) -> None:
        """Refuse a write to a row that belongs to a row outside the scope, as SQLite does.

        A row trigger rather than a policy: it also sees the cascades PostgreSQL runs as
        the owner, and its function reads the parents as the owner, so a table grant
        without `read` on them does not turn the check into a permission error. As on
        SQLite, an update is refused with the row's key before the change.
        """
        digest = hashlib.sha256(f"{table}\0{covered.column}".encode()).hexdigest()[:16]
        function = f"kaudit_owned_{digest}"

        def refuse(alias: str, key_alias: str) -> str:
            keys = ", ".join(f"{key_alias}.{_ident(c)}" for c in key)
            return (
                f"IF {covered.outside_sql(table, alias, postgres=True)} THEN "
                f"PERFORM {_REFUSE}({_quoted(table)}, json_build_array({keys})::text, "
                f"{_quoted(covered.column)}); END IF;"
            )

        body = (
            f"BEGIN IF TG_OP <> 'INSERT' THEN {refuse('OLD', 'OLD')} END IF; "
            f"IF TG_OP = 'INSERT' THEN {refuse('NEW', 'NEW')} END IF; "
            f"IF TG_OP = 'UPDATE' THEN {refuse('NEW', 'OLD')} END IF; "
            "IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END"
        )
        tag = "$kaudit$"
        while tag in body:
            tag = tag[:-1] + "x$"
        conn = self._db.conn
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql "
            f"SECURITY DEFINER SET search_path = pg_catalog, public AS {tag}{body}{tag}"
        )
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER {name} BEFORE INSERT OR UPDATE OR DELETE ON {t} FOR EACH ROW "
                f"WHEN ({_AS_IDENTITY}) EXECUTE FUNCTION {{f}}()"
            ).format(
                name=sql.Identifier(function),
                t=sql.Identifier(table),
                f=sql.Identifier(function),
            )
        )

    def _referential_triggers(self, schema: Schema, fks: list[ForeignKey]) -> None:
        """Refuse each statement whose foreign keys need a right outside the grant.

        Statement-level, as SQLite's authorizer refuses at compile time: whether or not a
        row would be touched. Only the identity's own statements fire them; the actions
        PostgreSQL runs as the owner are the ones already checked.
        """
        conn = self._db.conn
        if not fks:
            return
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {_GRANT_REFUSE}() RETURNS trigger LANGUAGE plpgsql "
            "AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', "
            "MESSAGE = 'permission denied for table ' || TG_ARGV[0], DETAIL = TG_ARGV[1]; "
            "END $$"
        )
        for table in schema.tables.values():
            for event, columns, needs in _statement_needs(table.name, table.columns, fks):
                missing = [(op, t) for op, t in needs if not self.identity.allows(t, op)]
                if missing and self.identity.allows(table.name, _VERBS[event]):
                    self._refusing_trigger(table.name, event, columns, missing[0])

    def _refusing_trigger(
        self, table: str, event: str, columns: tuple[str, ...], need: tuple[TableOp, str]
    ) -> None:
        op, target = need
        suffix = hashlib.sha256("\0".join(columns).encode()).hexdigest()[:12]
        of = sql.SQL(" OF {}").format(sql.SQL(", ").join(map(sql.Identifier, columns)))
        self._db.conn.execute(
            sql.SQL(
                "CREATE TRIGGER {name} BEFORE {event}{of} ON {t} FOR EACH STATEMENT "
                "WHEN (current_user = {role}) EXECUTE FUNCTION {f}({target}, {op})"
            ).format(
                name=sql.Identifier(f"kaudit_grant_{event.lower()}_{suffix}"[:63]),
                event=sql.SQL(event),
                of=of if columns else sql.SQL(""),
                t=sql.Identifier(table),
                role=sql.Literal(self._role),
                f=sql.Identifier(_GRANT_REFUSE),
                target=sql.Literal(target),
                op=sql.Literal(op),
            )
        )

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

    def _cascade_triggers(self, table: str, key: tuple[str, ...], columns: list[str]) -> None:
        """Refuse a cascaded update or delete of a row outside the scope, as SQLite does.

        As on SQLite, the key is the row's before the change.
        """
        conn = self._db.conn
        for i, column in enumerate(columns):
            col, value = sql.Identifier(column), sql.Literal(self.identity.scope[column])
            args = sql.SQL(", ").join(sql.Literal(a) for a in (column, *key))
            outside = {
                "DELETE": sql.SQL("OLD.{c} IS DISTINCT FROM {v}").format(c=col, v=value),
                "UPDATE": sql.SQL(
                    "(OLD.{c} IS DISTINCT FROM {v} OR NEW.{c} IS DISTINCT FROM {v})"
                ).format(c=col, v=value),
            }
            for event, when in outside.items():
                conn.execute(
                    sql.SQL(
                        "CREATE TRIGGER {name} BEFORE {event} ON {t} FOR EACH ROW "
                        "WHEN ({acting} AND {when}) EXECUTE FUNCTION {f}({args})"
                    ).format(
                        name=sql.Identifier(f"kaudit_cascade_{event.lower()}_{i}"),
                        event=sql.SQL(event),
                        t=sql.Identifier(table),
                        acting=sql.SQL(_ACTING),
                        when=when,
                        f=sql.Identifier(_CASCADE),
                        args=args,
                    )
                )

    def _note(self, exc: psycopg.Error, statement: str) -> None:
        """Record a refusal the database raised; any other error is the tool's own."""
        if exc.diag is None:
            return
        found = denial_of(
            self.identity,
            exc.sqlstate or "",
            exc.diag.message_primary or "",
            exc.diag.message_detail,
            statement,
        )
        if found is not None:
            self.denials.append(found)


def denial_of(
    identity: Identity, sqlstate: str, message: str, detail: str | None, statement: str
) -> Denial | None:
    """The boundary's refusal an error reports (table, key, reason), or None for another error.

    Shared by kaudit's own tool calls and the wire proxy in front of an agent's own SQL,
    which reads the same fields from the server's ErrorResponse.
    """
    if sqlstate != "42501":
        return None
    if message == _MESSAGE and detail:
        table, key, column = json.loads(detail)
        value = identity.scope[column]
        reason = f"row outside the {column} = {value} scope of role {identity.role}"
        return Denial(table, sqlite_json(key), reason)
    denied = _DENIED.match(message)
    if denied is None:
        return None
    table = denied.group(1)
    # A foreign key's need is named by its trigger; PostgreSQL's own refusal
    # names no operation: the first right SQLite's authorizer would ask for.
    op = detail if detail in _PRIVILEGES else _first_lacking(identity, table, statement)
    return Denial(table, None, f"role {identity.role} may not {op} {table}")


def _first_lacking(identity: Identity, table: str, statement: str) -> str:
    """The first right on `table` the statement needs and the identity lacks."""
    verb = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else ""
    asked: list[TableOp] = [_VERBS[verb], "read"] if verb in _VERBS else ["read"]
    if verb == "INSERT" and _UPSERT.search(statement):
        asked.append("update")
    return next((op for op in asked if not identity.allows(table, op)), "read")


def _statement_needs(
    table: str, columns: tuple[str, ...], fks: list[ForeignKey]
) -> list[tuple[str, tuple[str, ...], list[Need]]]:
    """(event, updated columns, needs) of each statement kind on `table` that has needs."""
    out: list[tuple[str, tuple[str, ...], list[Need]]] = [
        ("DELETE", (), delete_needs(table, fks)),
        ("INSERT", (), insert_needs(table, fks)),
    ]
    for column in columns:
        out.append(("UPDATE", (column,), update_needs(table, {column}, fks)))
    return [entry for entry in out if entry[2]]


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


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
