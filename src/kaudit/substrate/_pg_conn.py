"""Connections to a PostgreSQL server and the two database statements every module needs."""

from __future__ import annotations

import os
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


KAUDIT_OPTIONS = "-c TimeZone=UTC"
"""Server settings kaudit adds to every session: UTC, so a timestamptz reads back as the
same ISO text in every session (the template's dump and each run's are compared)."""


def session_options(given: dict[str, Any]) -> str:
    """The `options` of a connection: the user's own (URL, else `PGOPTIONS`), then kaudit's.

    libpq takes a connection's `options` instead of the URL's and of `PGOPTIONS`, so
    kaudit's are appended to the user's rather than passed alone (which would silently
    drop a `search_path` or `statement_timeout` the user asked for). For a setting both
    name, kaudit's comes last and wins: only `TimeZone`.
    """
    user = given.get("options") or os.environ.get("PGOPTIONS", "")
    return f"{user} {KAUDIT_OPTIONS}".strip()


def connect(url: str, dbname: str | None = None) -> psycopg.Connection[Any]:
    """An autocommit connection to `url`, or to database `dbname` on the same server."""
    extra: dict[str, Any] = {} if dbname is None else {"dbname": dbname}
    try:
        given = conninfo_to_dict(url)
        extra |= {key: value for key, value in KEEPALIVES.items() if key not in given}
        extra["options"] = session_options(given)
        return psycopg.connect(url, autocommit=True, **extra)
    except psycopg.Error as exc:
        message = str(exc).replace(url, redacted(url))
        raise SubstrateError(
            f"cannot connect to PostgreSQL at {redacted(url)}: {message}"
        ) from None


def drop_database(admin: psycopg.Connection[Any], name: str) -> None:
    """Drop `name` if it exists; sessions still connected to it are terminated."""
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def database_exists(admin: psycopg.Connection[Any], name: str) -> bool:
    """Whether the server holds a database called `name`."""
    row = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    return row is not None
