"""The PostgreSQL server the `postgres` tests use: 127.0.0.1:5432, or `$KAUDIT_TEST_PG`.

A missing server skips these tests on a laptop but fails them under `CI=true`:
CI must prove the substrate, never silently skip it.
"""

from __future__ import annotations

import os

import psycopg
import pytest

URL = os.environ.get("KAUDIT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def server_url() -> str:
    try:
        psycopg.connect(URL, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL not reachable at {URL}: {exc}"
        if os.environ.get("CI"):  # any CI value: CI must prove the substrate, never skip it
            pytest.fail(reason)
        pytest.skip(reason)
    return URL


def databases(prefix: str) -> list[str]:
    with psycopg.connect(URL, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s) ORDER BY 1", (prefix,)
        ).fetchall()
    return [name for (name,) in rows]
