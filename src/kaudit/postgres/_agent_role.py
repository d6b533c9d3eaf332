"""The login role an agent's own SQL runs as: one per run, owning nothing.

The role has no right of its own anywhere: it may connect to its run's database only
(`CONNECT` is revoked from PUBLIC there), and all it may do inside comes from a role it
is a member of, whose rights exist only inside run databases (dropped with them):
without an identity `kaudit_agent` (SELECT, INSERT, UPDATE, DELETE on the world's
tables, its sequences; it owns no table, so DDL is refused, and has no right on
kaudit's change log, which the capture triggers write as its owner); with an identity
`kaudit_identity`, without inheriting: every session of the role starts as that role
in the run's database, under the grants and row-level security the boundary installs
there (`kaudit.boundary`), the same ones kaudit's own tools run under. The scope
triggers fire for any session of an agent role, whatever it sets; a session that sets
its role to NONE has no right at all. The identity role's right on the change log is
revoked in that database, so the agent cannot erase what it changed.

Dropping the role opens no session on the run's database (a watcher counts sessions
there to tell whether the agent reached its world): it is dropped from another database
of the server. The role is named after the run's database (`kaudit_a_` for
`kaudit_r_`) and has a random password (in the agent's URL, for a server that asks);
`prune` drops every agent role whose database is gone, so a killed kaudit leaves none
behind for long.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from kaudit.errors import SubstrateError
from kaudit.postgres._catalog import RUN_PREFIX
from kaudit.postgres._conn import connect, redacted
from kaudit.postgres._db import PostgresDb
from kaudit.postgres._guard import AGENT_ROLE_PREFIX, PostgresGuard, ensure_role
from kaudit.spec import Identity
from kaudit.substrate import ForeignKey, Schema
from kaudit.substrate._schema import INTERNAL_PREFIX

_GUARDED = "SELECT 1 FROM pg_proc WHERE proname = 'kaudit_scope_refuse'"


def agent_role_name(database: str) -> str:
    """The agent role of the run database `database`."""
    return AGENT_ROLE_PREFIX + database.removeprefix(RUN_PREFIX)


@dataclass(frozen=True)
class AgentRole:
    """A run's login role: its name and password, on `server`, for `database`."""

    server: str
    database: str
    name: str
    password: str

    def drop(self) -> None:
        """End the role's sessions and drop it, from outside the run's database."""
        name, database = sql.Identifier(self.name), sql.Identifier(self.database)
        try:
            with _elsewhere(self.server, self.database) as admin:
                _end_sessions(admin, self.name)
                found = admin.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)
                )
                if found.fetchone() is not None:
                    admin.execute(
                        sql.SQL("REVOKE CONNECT ON DATABASE {} FROM {}").format(database, name)
                    )
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(name))
        except psycopg.Error as exc:
            raise SubstrateError(
                f"PostgreSQL at {redacted(self.server)}: cannot drop role {self.name}: {exc}"
            ) from None


def create_agent_role(
    server: str,
    database: str,
    identity: Identity | None = None,
    schema: Schema | None = None,
    ownership: Sequence[ForeignKey] = (),
) -> AgentRole:
    """Create the login role for the agent's own SQL in run database `database`.

    With an identity, the boundary kaudit's own tools run under is reused when the run's
    gateway has installed it; otherwise it is installed from `schema` and `ownership`.

    Raises:
        SubstrateError: the server refused, or an identity's boundary is missing and
            no schema was given (the message names the server and the role).
    """
    role = AgentRole(server, database, agent_role_name(database), secrets.token_hex(16))
    name, target = sql.Identifier(role.name), sql.Identifier(database)
    try:
        group = _ensure_agent_group(server) if identity is None else ensure_role(server)
        with connect(server, database) as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN {} PASSWORD {}").format(
                    name,
                    sql.SQL("INHERIT" if identity is None else "NOINHERIT"),
                    sql.Literal(role.password),
                )
            )
            conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), name))
            conn.execute(sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC").format(target))
            conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(target, name))
            if identity is None:
                _grant_rows(conn, sql.Identifier(group))
            else:
                conn.execute(
                    sql.SQL("ALTER ROLE {} IN DATABASE {} SET role = {}").format(
                        name, target, sql.Literal(group)
                    )
                )
                _guard(conn, server, schema, identity, ownership)
    except (psycopg.Error, SubstrateError) as exc:
        with contextlib.suppress(SubstrateError):  # the first failure is the one to report
            role.drop()
        raise SubstrateError(
            f"PostgreSQL at {redacted(server)}: cannot set up role {role.name} "
            f"for database {database}: {exc}"
        ) from None
    except BaseException:  # interrupted half-way: a role with half its rights must not stay
        with contextlib.suppress(SubstrateError):
            role.drop()
        raise
    return role


AGENT_GROUP = "kaudit_agent"
"""The role whose rights, inside each run database without an identity, agent roles use."""


def _ensure_agent_group(server: str) -> str:
    """Create `kaudit_agent` on the server if it is not there; concurrent creators do not fail."""
    with connect(server) as admin:
        admin.execute(
            f"DO $$ BEGIN CREATE ROLE {AGENT_GROUP} NOLOGIN; "
            "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
        )
    return AGENT_GROUP


@contextlib.contextmanager
def _elsewhere(server: str, database: str) -> Iterator[psycopg.Connection[Any]]:
    """An admin connection to a database of the server other than `database`."""
    given = conninfo_to_dict(server).get("dbname")
    choices = [d for d in (given, "postgres", "template1") if d and d != database]
    for number, choice in enumerate(choices):
        try:
            conn = connect(server, str(choice))
        except SubstrateError:
            if number == len(choices) - 1:
                raise
            continue
        with conn:
            yield conn
        return


def _grant_rows(conn: psycopg.Connection[Any], name: sql.Identifier) -> None:
    """Rights on the rows of every world table (kaudit's own tables excepted)."""
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(name))
    for table in _tables(conn, internal=False):
        conn.execute(
            sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {} TO {}").format(
                sql.Identifier(table), name
            )
        )
    conn.execute(
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(name)
    )


def _guard(
    conn: psycopg.Connection[Any],
    server: str,
    schema: Schema | None,
    identity: Identity,
    ownership: Sequence[ForeignKey],
) -> None:
    """The identity's boundary in the run database, unless kaudit's tools installed it."""
    if conn.execute(_GUARDED).fetchone() is None:
        if schema is None:
            raise SubstrateError("the identity's boundary is not installed and no schema given")
        PostgresGuard(PostgresDb(conn), identity, server, schema, ownership)
    conn.execute(
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(
            sql.Identifier(ensure_role(server))
        )
    )
    for table in _tables(conn, internal=True):
        conn.execute(
            sql.SQL("REVOKE ALL ON TABLE {} FROM {}").format(
                sql.Identifier(table), sql.Identifier(ensure_role(server))
            )
        )


def _tables(conn: psycopg.Connection[Any], *, internal: bool) -> list[str]:
    """The run database's own tables (`internal`: kaudit's), by name."""
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "AND starts_with(tablename, %s) = %s ORDER BY 1",
        (INTERNAL_PREFIX, internal),
    ).fetchall()
    return [name for (name,) in rows]


def _end_sessions(conn: psycopg.Connection[Any], role: str) -> None:
    conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE usename = %s AND pid <> pg_backend_pid()",
        (role,),
    )


def prune_agent_roles(admin: psycopg.Connection[Any], *, dry_run: bool) -> list[str]:
    """Drop every agent role whose run database is gone; the names dropped (or to drop)."""
    rows = admin.execute(
        "SELECT r.rolname FROM pg_roles r WHERE starts_with(r.rolname, %s) "
        "AND NOT EXISTS (SELECT 1 FROM pg_database d WHERE d.datname = %s || "
        "substr(r.rolname, %s)) ORDER BY 1",
        (AGENT_ROLE_PREFIX, RUN_PREFIX, len(AGENT_ROLE_PREFIX) + 1),
    ).fetchall()
    names = [name for (name,) in rows]
    if not dry_run:
        for name in names:
            _end_sessions(admin, name)
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
    return names
