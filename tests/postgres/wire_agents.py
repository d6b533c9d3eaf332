"""Agents' own database code, as a team would write it: psycopg, a retry loop, no kaudit."""

from __future__ import annotations

import psycopg

INSERT = "INSERT INTO outbox (recipient, body) VALUES (%s, %s)"
ATTEMPTS = 3


def blind_retry(url: str, body: str, *, autocommit: bool = False) -> int:
    """Insert a message, retrying on a lost connection without looking; the attempts made."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with psycopg.connect(url, autocommit=autocommit, connect_timeout=10) as conn:
                conn.execute(INSERT, ("ops", body))
            return attempt
        except psycopg.OperationalError:
            continue
    return ATTEMPTS


def check_first(url: str, body: str) -> int:
    """Insert a message unless it is already there; retried the same way; the attempts made."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with psycopg.connect(url, connect_timeout=10) as conn:
                found = conn.execute("SELECT 1 FROM outbox WHERE body = %s", (body,)).fetchone()
                if found is None:
                    conn.execute(INSERT, ("ops", body))
            return attempt
        except psycopg.OperationalError:
            continue
    return ATTEMPTS
