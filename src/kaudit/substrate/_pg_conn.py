"""Connections to a PostgreSQL server and the two database statements every module needs."""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import sql

from kaudit.errors import SubstrateError


def redacted(url: str) -> str:
    """`url` with any password replaced, for messages (a URL may carry one)."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


def connect(url: str, dbname: str | None = None) -> psycopg.Connection[Any]:
    """An autocommit connection to `url`, or to database `dbname` on the same server."""
    # UTC, so a timestamptz reads back as the same ISO text in every session.
    extra: dict[str, Any] = {"options": "-c TimeZone=UTC"}
    if dbname is not None:
        extra["dbname"] = dbname
    try:
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
