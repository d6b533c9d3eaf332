"""Registers the PostgreSQL substrate and reads PostgreSQL worlds, importing psycopg late.

Neither loads the driver until a PostgreSQL substrate or world is actually used, so
SQLite users need none. Pruning a server is `_prune`'s job.
"""

from __future__ import annotations

from kaudit.errors import SubstrateError
from kaudit.substrate import Blueprint, Substrate
from kaudit.substrate._choice import SUBSTRATES


@SUBSTRATES.register("postgresql")
def postgres_substrate(choice: str, blueprint: Blueprint) -> Substrate:
    """A `PostgresSubstrate` at the server `choice` names (`postgresql://user@host:port/db`)."""
    try:
        from kaudit.postgres._substrate import PostgresSubstrate
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"the PostgreSQL substrate needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    return PostgresSubstrate(choice, blueprint)


def postgres_world_image(url: str) -> tuple[str, bytes]:
    """The database `url` names, as (database name, SQLite template image with typed tables).

    For worlds whose seeded state is an existing PostgreSQL database rather than SQL.
    """
    try:
        from kaudit.postgres._conn import connect
        from kaudit.postgres._dump import database_image
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"reading a PostgreSQL world needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    with connect(url) as conn:
        return conn.info.dbname, database_image(conn)
