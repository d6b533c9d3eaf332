"""The PostgreSQL server the `postgres` tests use: 127.0.0.1:5432, or `$KAUDIT_TEST_PG`.

A missing server skips these tests on a laptop but fails them under `CI=true`:
CI must prove the substrate, never silently skip it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from kaudit.postgres._catalog import ServerDatabase
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate import Blueprint
from kaudit.substrate._sqlite import build_image

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


HOLDER = """
import sys, time
from kaudit.substrate._choice import open_substrate
from tests.pg import token_world
from tests.postgres import pg_world
world = token_world(sys.argv[3]) if len(sys.argv) > 3 else pg_world.blueprint()
sandbox = open_substrate(sys.argv[1], world).seed(sys.argv[2])
print(sandbox.database, flush=True)
time.sleep(600)
"""


def drop_template(name: str) -> None:
    """Drop a test's own template database (a token world's) if it is there."""
    if name not in databases("kaudit_t_"):
        return
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" IS_TEMPLATE false')
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def token_world(token: str) -> Blueprint:
    """A one-row world of its own, so a test owns its template database."""
    script = f"CREATE TABLE t (a TEXT PRIMARY KEY); INSERT INTO t VALUES ('{token}');"
    return Blueprint(f"token-{token}", build_image(lambda conn: conn.executescript(script)))


@contextmanager
def holder(
    url: str, run_id: str, token: str | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A real child process that seeds `run_id` on `url`, says its database, and waits.

    With `token` the world is `token_world(token)`, else the substrate tests' world. It is
    SIGKILLed on exit (or earlier by the test), as a killed campaign would be.
    """
    root = Path(__file__).resolve().parents[1]
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, run_id, *([token] if token else [])],
        stdout=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            yield child, child.stdout.readline().strip()
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()


def entry(pg: PostgresSubstrate, campaign: str, name: str) -> ServerDatabase | None:
    return next((d for d in pg.run_databases(campaign) if d.name == name), None)


def wait_orphaned(pg: PostgresSubstrate, campaign: str, name: str) -> ServerDatabase:
    """The entry once the server has ended a killed owner's sessions (a moment after the kill)."""
    deadline = time.monotonic() + 30
    while True:
        found = entry(pg, campaign, name)
        assert found is not None
        if found.orphaned or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
