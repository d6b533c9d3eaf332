"""Which guard enforces an identity: the one for the sandbox's database."""

from __future__ import annotations

from collections.abc import Sequence

from kaudit.boundary._layer import Guard
from kaudit.boundary._sqlite import SqliteGuard
from kaudit.errors import SubstrateError
from kaudit.spec import Identity
from kaudit.substrate import ForeignKey, Sandbox, ServerSandbox, SqliteDb, SqliteSandbox


def guard_for(sandbox: Sandbox, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> Guard:
    """The guard for `sandbox`: SQLite's authorizer or PostgreSQL's role and policies.

    `ownership` adds the foreign keys the world declares (its substrate's `ownership`)
    to the schema's own, for the scope to follow. psycopg is imported only for a
    PostgreSQL sandbox, so SQLite users need no driver.

    Raises:
        SubstrateError: the sandbox's database has no way to enforce an identity.
    """
    if isinstance(sandbox, SqliteSandbox):
        return SqliteGuard(
            sandbox.db.conn,
            identity,
            install=sandbox.hold_script,
            template=sandbox.initial.digest,
            ownership=ownership,
        )
    if isinstance(sandbox.db, SqliteDb):
        return SqliteGuard(sandbox.db.conn, identity, ownership=ownership)
    if isinstance(sandbox, ServerSandbox):
        from kaudit.boundary._postgres import PostgresGuard
        from kaudit.postgres._db import PostgresDb

        if isinstance(sandbox.db, PostgresDb):
            return PostgresGuard(sandbox.db, identity, sandbox.server, sandbox.schema, ownership)
    raise SubstrateError(
        f"run {sandbox.run_id}: permission boundaries are enforced on SQLite and PostgreSQL "
        "sandboxes only"
    )
