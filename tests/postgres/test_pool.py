"""The rollback pool when its sessions die or its process forks."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.postgres._dump import first_difference
from kaudit.postgres._pool import Prepared, pool_serial
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate._choice import open_substrate
from kaudit.suites import load_suite
from tests.pg import databases, drop_template, token_world
from tests.postgres import pg_world

pytestmark = pytest.mark.postgres

FORKED = """
import json, os, sys
from kaudit.substrate._choice import open_substrate
from kaudit.postgres._dump import first_difference
from tests.pg import databases, drop_template, token_world
url, token = sys.argv[1:3]
substrate = open_substrate(url + "?reset=rollback", token_world(token))
first = substrate.seed("kaudit_i14_fork/m/t/0")
first.close()  # back in the pool, idle, with its open connection
read, write = os.pipe()
child = os.fork()
if child == 0:  # a worker forked by multiprocessing or a pre-fork server; exits normally
    box = substrate.seed("kaudit_i14_fork/m/t/child")
    os.write(write, json.dumps([box.database, box.db.conn.info.backend_pid]).encode())
    box.close()
    sys.exit(0)
os.waitpid(child, 0)
child_database, child_backend = json.loads(os.read(read, 4096))
names = databases("kaudit_r_")
again = substrate.seed("kaudit_i14_fork/m/t/1")
print(json.dumps({
    "parent": [first.database, first.db.conn.info.backend_pid],
    "child": [child_database, child_backend],
    "after_child_exit": [first.database in names, child_database in names],
    "parent_again": again.database,
    "difference": first_difference(substrate.template, again.dump().image),
}))
again.close()
"""


def test_a_forked_child_never_takes_or_drops_its_parent_s_pooled_databases(pg_url: str) -> None:
    """Bug caught: a pool inherited by fork. Tried: the child took the parent's idle
    database and its very session, and at its normal exit its finalizer dropped that
    database, so the parent's next seed died with a raw `consuming input failed`."""
    root, token = Path(__file__).resolve().parents[2], os.urandom(4).hex()
    try:
        done = subprocess.run(
            [sys.executable, "-c", FORKED, pg_url, token],
            capture_output=True,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            text=True,
        )
    finally:
        drop_template(_pooled(pg_url, token).template_database)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["child"][0] != seen["parent"][0] and seen["child"][1] != seen["parent"][1]
    assert seen["after_child_exit"] == [True, False]  # the child dropped only its own
    assert seen["parent_again"] == seen["parent"][0] and seen["difference"] is None


def _pooled(pg_url: str, token: str) -> PostgresSubstrate:
    substrate = open_substrate(pg_url + "?reset=rollback", token_world(token))
    assert isinstance(substrate, PostgresSubstrate)
    return substrate


@pytest.fixture
def pooled(pg_url: str) -> Iterator[PostgresSubstrate]:
    substrate = _pooled(pg_url, os.urandom(4).hex())
    yield substrate
    drop_template(substrate.template_database)


def _end_session(pg_url: str, backend_pid: int) -> None:
    """End one session from the server's side (as idle_session_timeout or a restart would)."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            row = admin.execute(
                "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend_pid,)
            ).fetchone()
            if row is None:
                return
            time.sleep(0.05)


def test_a_pooled_database_whose_session_died_is_dropped_and_replaced(
    pg_url: str, pooled: PostgresSubstrate
) -> None:
    """Bug caught: a dead idle pooled session handed to the next run. Tried: its BEGIN
    raised psycopg's raw AdminShutdown out of seed, and the database was leaked (neither
    in the pool nor dropped)."""
    substrate = pooled
    first = substrate.seed("kaudit_i14_dead/m/t/0")
    first.close()
    substrate.pool().settle()  # rolled back and pooled by the worker
    dead = _end_idle_sessions(pg_url, substrate)
    second = substrate.seed("kaudit_i14_dead/m/t/1")
    try:
        substrate.pool().settle()
        assert second.database not in dead and not set(dead) & set(databases("kaudit_r_"))
        assert first_difference(substrate.template, second.dump().image) is None
    finally:
        second.close()
    substrate.pool().settle()
    existing = databases("kaudit_r_")
    third = substrate.seed("kaudit_i14_dead/m/t/2")
    try:
        assert third.database in existing  # the replacement is pooled in turn
    finally:
        third.close()


def _end_idle_sessions(pg_url: str, substrate: PostgresSubstrate) -> list[str]:
    """End the session of every idle pooled database; their names."""
    idle = list(substrate.pool()._idle)
    for prepared in idle:
        _end_session(pg_url, prepared.conn.info.backend_pid)
    return [prepared.database for prepared in idle]


def test_a_run_after_a_dead_pooled_session_is_labeled(pg_url: str) -> None:
    """Bug caught: a psycopg error escaping `run_pipeline` (it turns only kaudit's errors
    into INVALID runs), so a served run or a library caller crashed. Tried: `run 1 raised
    psycopg.errors.AdminShutdown`."""
    suite = load_suite("builtin").on_substrate(pg_url + "?reset=rollback")
    task = suite.tasks["itsm/incident-delete-duplicate"]
    substrate = suite.substrate(task)
    agent = ScriptedAgent("oracle")

    def run(index: int) -> str:
        request = RunRequest(
            campaign="kaudit_i14_deadrun", task=task, model=agent.name, run_index=index, seed=1
        )
        return asyncio.run(run_pipeline(request, agent, substrate)).record.status

    assert run(0) == "labeled"
    substrate.pool().settle()  # type: ignore[attr-defined]
    dead = _end_idle_sessions(pg_url, substrate)  # type: ignore[arg-type]
    assert run(1) == "labeled"
    substrate.pool().settle()  # type: ignore[attr-defined]
    assert not set(dead) & set(databases("kaudit_r_"))


def test_clones_made_ahead_are_what_the_next_runs_get_and_release_drops_them(
    pg_url: str,
) -> None:
    """Fails if the worker does not clone ahead (the next seed clones on the run's path:
    another database than the ready one), makes more than the runs' peak, or if a
    finished run's database or a ready clone outlives the pool's release."""
    substrate = open_substrate(pg_url + "?ahead=3", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    first = substrate.seed("kaudit_ahead/m/t/0")
    pool = substrate.pool()
    pool.settle()
    ready = [prepared.database for prepared in pool._idle]
    assert len(ready) == 1  # one run at a time so far: one ready, not three
    second = substrate.seed("kaudit_ahead/m/t/1")
    assert second.database == ready[0]
    assert first_difference(substrate.template, second.dump().image) is None
    made = {first.database, second.database}
    first.close()
    second.close()
    pool.settle()
    pool.release()
    assert not made & set(databases("kaudit_r_"))
    assert not pool._idle


def test_a_substrate_nobody_holds_releases_its_pool(pg_url: str) -> None:
    """Fails if anything but its users keeps a substrate alive once its runs are closed,
    so the finalizer never drops its pooled databases or closes their sessions. Tried:
    the worker kept its last cleanup job (a closure over the sandbox, and so over the
    substrate) in a local while waiting; every substrate of the test suite then held its
    sessions open until PostgreSQL refused new clients ("too many clients already")."""
    substrate = open_substrate(pg_url + "?reset=rollback", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    box = substrate.seed("kaudit_unheld/m/t/0")
    pooled = box.database
    box.close()
    pool = substrate.pool()
    pool.settle()
    assert pooled in {prepared.database for prepared in pool._idle}
    alive = weakref.ref(substrate)
    del substrate, box, pool
    gc.collect()
    assert alive() is None
    assert pooled not in databases("kaudit_r_")


def test_a_database_made_while_its_substrate_dies_is_dropped(pg_url: str) -> None:
    """Fails if a database the worker makes ahead outlives a pool released while it was
    being made: the substrate's last reference can die in the worker thread, as `make`
    returns, and its finalizer then empties the idle list before the worker appends to
    it. Tried: without the worker's drain after a release, that database stays on the
    server and its session open until psycopg warns "deleted while still open" (the CI
    failure of `test_a_run_after_a_dead_pooled_session_is_labeled`)."""
    substrate = open_substrate(pg_url + "?reset=rollback", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    pool, holder, made, go = substrate.pool(), [substrate], [], threading.Event()
    alive = weakref.ref(substrate)

    def make() -> Prepared:
        go.wait(30)
        found = holder.pop()
        prepared = found._prepare("kaudit_dying/ahead", pool_serial())
        made.append(prepared)
        del found
        gc.collect()  # the substrate dies here, in the worker, before `make` returns
        return prepared

    pool._make = make
    state = pool._state
    with state.cond:
        state.peak = 1  # one run served so far: the worker makes one ahead
        pool._wake()
    worker = state.thread
    assert worker is not None
    del substrate, pool
    go.set()
    worker.join(30)
    assert alive() is None and state.closed
    assert made and made[0].conn.closed
    assert made[0].database not in databases("kaudit_r_")


def test_unknown_dump_and_ahead_options_are_refused() -> None:
    """Fails if a typo in `dump=` silently takes the change log, or `ahead=` takes junk."""
    from kaudit.errors import SubstrateError
    from kaudit.postgres._substrate import split_choice

    assert split_choice("postgresql://u@h/db?dump=full&ahead=0&sslmode=disable") == (
        "postgresql://u@h/db?sslmode=disable",
        {"reset": "clone", "dump": "full", "ahead": "0"},
    )
    with pytest.raises(SubstrateError, match="dump='ful'"):
        split_choice("postgresql://u@h/db?dump=ful")
    with pytest.raises(SubstrateError, match="ahead='-1'"):
        split_choice("postgresql://u@h/db?ahead=-1")
