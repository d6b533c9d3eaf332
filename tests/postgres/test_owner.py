"""A process whose owner session the server ended takes its key and templates again."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from kaudit.postgres._conn import connect
from kaudit.postgres._dump import first_difference
from kaudit.postgres._owner import OWNER_SPACE, owner_for
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate._choice import open_substrate
from tests.pg import databases, drop_template, token_world

pytestmark = pytest.mark.postgres

OTHER_PROCESS = """
import json, sys
import psycopg
from kaudit.substrate._choice import open_substrate
from kaudit.postgres._catalog import _prune_template, server_databases
from kaudit.postgres._substrate import TRANSLATION_VERSION
from tests.pg import token_world
url, token, campaign = sys.argv[1:4]
substrate = open_substrate(url, token_world(token))
reclaimed = substrate.reclaim(campaign)
with psycopg.connect(url, autocommit=True) as admin:
    [template] = [d for d in server_databases(admin) if d.name == substrate.template_database]
    pruned = _prune_template(admin, template, TRANSLATION_VERSION, keep=(), dry=False)
print(json.dumps({"reclaimed": reclaimed, "template": pruned.action}))
"""
"""What another process sharing the server does: reclaim the campaign, prune the template
as one no kept suite needs (only this test's own template, not the shared server's)."""


def other_process(url: str, token: str, campaign: str) -> dict[str, object]:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, url, token, campaign],
        capture_output=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        text=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def owner_pids(url: str, key: int) -> list[int]:
    """The server sessions holding owner key `key`."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::oid "
            "AND objid = %s::oid AND objsubid = 2 AND granted",
            (OWNER_SPACE, key),
        ).fetchall()
    return [pid for (pid,) in rows]


def end_owner_session(url: str, key: int) -> None:
    """End the owner's session from the server's side, as idle_session_timeout would."""
    [pid] = owner_pids(url, key)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    deadline = time.monotonic() + 30
    while owner_pids(url, key) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not owner_pids(url, key)


@pytest.fixture
def token_substrate(pg_url: str) -> Iterator[tuple[PostgresSubstrate, str]]:
    token = secrets.token_hex(4)
    # Each seed clones now (ahead=0): these tests end the owner's session between seeds,
    # and a clone made ahead was named, and connected to, before that.
    substrate = open_substrate(pg_url + "?ahead=0", token_world(token))
    assert isinstance(substrate, PostgresSubstrate)
    yield substrate, token
    drop_template(substrate.template_database)


def test_after_its_owner_session_ended_a_live_process_is_spared_by_reclaim_and_prune(
    pg_url: str, token_substrate: tuple[PostgresSubstrate, str]
) -> None:
    """Bug caught: an owner that never notices its session ended (psycopg marks a
    connection broken only after a failed operation, and nothing runs on this one). Tried:
    the next run's database was named with the now free key, so another process's reclaim
    dropped it (reclaimed 1), and its prune dropped the template in use ('dropped'), after
    which every seed failed with `template database ... does not exist`."""
    substrate, token = token_substrate
    substrate.seed("kaudit_i14_owner/m/t/0").close()  # claims the key, holds the template
    key = owner_for(pg_url).tag.key
    end_owner_session(pg_url, key)
    box = substrate.seed("kaudit_i14_owner/m/t/1")
    box.db.conn.close()  # nobody connected: only the owner lock keeps it, as between
    # CREATE DATABASE and the run's connection
    try:
        assert len(owner_pids(pg_url, owner_for(pg_url).tag.key)) == 1
        assert other_process(pg_url, token, "kaudit_i14_owner") == {
            "reclaimed": 0,
            "template": "kept",
        }
        assert box.database in databases("kaudit_r_")
        again = substrate.seed("kaudit_i14_owner/m/t/2")
        assert first_difference(substrate.template, again.dump().image) is None
        again.close()
    finally:
        substrate.drop_database(box.database)


def test_a_template_pruned_while_the_owner_session_was_gone_is_built_again(
    pg_url: str, token_substrate: tuple[PostgresSubstrate, str]
) -> None:
    """Bug caught: a process that takes its claim again but still trusts that the template
    it checked under the lost claim exists. Tried: every later seed failed with `template
    database ... does not exist` (each run INVALID for the rest of the campaign)."""
    substrate, token = token_substrate
    substrate.seed("kaudit_i14_rebuild/m/t/0").close()
    end_owner_session(pg_url, owner_for(pg_url).tag.key)
    # Before the process notices, nothing holds the template: a prune may drop it.
    assert other_process(pg_url, token, "kaudit_i14_rebuild")["template"] == "dropped"
    assert substrate.template_database not in databases("kaudit_t_")
    box = substrate.seed("kaudit_i14_rebuild/m/t/1")
    try:
        assert first_difference(substrate.template, box.dump().image) is None
        assert substrate.template_database in databases("kaudit_t_")
    finally:
        box.close()


def test_the_owner_session_outlives_a_server_idle_session_timeout(pg_url: str) -> None:
    """Bug caught: an owner session that a server's (or database's) idle_session_timeout
    ends between runs, losing its lock while the process idles. Tried without the session's
    own `idle_session_timeout = 0`: the lock was gone after the timeout."""
    admin_database = f"kaudit_i14_idle_{secrets.token_hex(4)}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(admin_database)))
        admin.execute(
            sql.SQL("ALTER DATABASE {} SET idle_session_timeout = '300ms'").format(
                sql.Identifier(admin_database)
            )
        )
    url = pg_url.rsplit("/", 1)[0] + "/" + admin_database
    try:
        with connect(url) as plain:  # the timeout is in force for other sessions
            time.sleep(0.8)
            with pytest.raises(psycopg.OperationalError):
                plain.execute("SELECT 1")
        owner = owner_for(url)
        time.sleep(0.8)
        assert owner_pids(url, owner.tag.key)
        before = owner.tag
        assert owner.current() == before
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(admin_database))
            )


def test_every_connection_asks_for_tcp_keepalives_unless_the_url_sets_them(pg_url: str) -> None:
    """Bug caught: libpq's default keepalive idle of two hours, after which a proxy or NAT
    has long reaped an idle owner connection; or the URL's own choice overridden."""
    with connect(pg_url) as conn:
        assert conn.info.get_parameters()["keepalives_idle"] == "30"
    separator = "&" if "?" in pg_url else "?"
    with connect(pg_url + separator + "keepalives_idle=7") as conn:
        assert conn.info.get_parameters()["keepalives_idle"] == "7"
