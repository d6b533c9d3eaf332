"""Connections to a PostgreSQL server and the two database statements every module needs."""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from kaudit.errors import SubstrateError


def redacted(url: str) -> str:
    """`url` with any password replaced, for messages (a URL may carry one)."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
"""TCP keepalives on every connection (libpq's default waits two hours before the first
probe): traffic every 30 s keeps a NAT or proxy from reaping an idle owner or pooled
connection, and a peer that vanished fails the socket after about a minute, so the next
check on it fails instead of waiting on a dead link. A URL's own settings win."""


SESSION_SETTINGS = "SET TimeZone = 'UTC'"
"""What kaudit sets in every session, once, right after connecting: UTC, so a timestamptz
reads back as the same ISO text in every session (the template's dump and each run's are
compared).

Set by a statement rather than passed as the connection's `options`: libpq takes an
explicit `options` instead of the user's own from the URL, `PGOPTIONS` or a service
file, and for a service file kaudit cannot see them to merge. A session-level SET in
autocommit outlives every later transaction, so a pooled connection whose runs are
rolled back keeps it (a SET a tool runs inside a run's transaction is rolled back with
it). The user's `TimeZone`, if any, is the one setting overridden."""


def connect(url: str, dbname: str | None = None) -> psycopg.Connection[Any]:
    """An autocommit connection to `url`, or to database `dbname` on the same server.

    The session has the user's settings (URL, `PGOPTIONS`, service file) and kaudit's UTC.
    """
    extra: dict[str, Any] = {} if dbname is None else {"dbname": dbname}
    try:
        given = conninfo_to_dict(url)
        extra |= {key: value for key, value in KEEPALIVES.items() if key not in given}
        conn = psycopg.connect(url, autocommit=True, **extra)
    except psycopg.Error as exc:
        message = str(exc).replace(url, redacted(url))
        raise SubstrateError(
            f"cannot connect to PostgreSQL at {redacted(url)}: {message}"
        ) from None
    try:
        conn.execute(SESSION_SETTINGS)
    except psycopg.Error as exc:
        conn.close()
        raise SubstrateError(f"PostgreSQL at {redacted(url)}: {SESSION_SETTINGS}: {exc}") from None
    return conn


def drop_database(admin: psycopg.Connection[Any], name: str) -> None:
    """Drop `name` if it exists; sessions still connected to it are terminated."""
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def database_exists(admin: psycopg.Connection[Any], name: str) -> bool:
    """Whether the server holds a database called `name`."""
    row = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    return row is not None
