"""The wire proxy against the real server, driven by real psycopg agents.

Each test seeds the mini world on PostgreSQL, opens the run's door (role + proxy) with
some fault rules, runs an agent's own code on the URL it hands out, and reads the
run's database as the owner.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future

import psycopg
import pytest

import tests.mini_world  # noqa: F401  (registers the 'mini' world)
from kaudit.errors import SubstrateError
from kaudit.postgres._proxy import Upstream, WireProxy
from kaudit.postgres._wire_door import WireDoor
from kaudit.postgres._wire_faults import WireFaults
from kaudit.spec import FaultRule
from kaudit.substrate import Sandbox
from kaudit.worlds._world import get_world
from tests.postgres.wire_agents import blind_retry, check_first

pytestmark = pytest.mark.postgres

ACK_LOST_ONCE = [FaultRule(kind="ack_lost_after_commit", limit=1)]


@pytest.fixture
def box(pg_url: str, request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = get_world("mini").substrate(pg_url).seed(f"wire-{request.node.name}")
    yield sandbox
    sandbox.close()


def door_of(box: Sandbox, hold: float = 30.0) -> WireDoor:
    return WireDoor(box.server, box.database, box.schema, hold=hold)  # type: ignore[attr-defined]


def copies(box: Sandbox, body: str) -> int:
    row = box.db.one("SELECT count(*) AS n FROM outbox WHERE body = ?", (body,))
    assert row is not None
    return int(row["n"])


def test_blind_retry_after_a_lost_acknowledgement_duplicates_the_row(box: Sandbox) -> None:
    """Fails if the proxy drops the connection before forwarding COMMIT (no duplicate), or
    never breaks the commit at all (one attempt)."""
    door = door_of(box)
    url = door.open(ACK_LOST_ONCE, seed=1, identity=None)
    assert blind_retry(url, "invoice 7 is due") == 2
    log = door.close()
    assert copies(box, "invoice 7 is due") == 2
    [fault] = log.faults
    assert fault["kind"] == "ack_lost_after_commit" and fault["tool"] == "sql"
    assert (fault["committed"], fault["applied"]) == (True, 1)
    assert fault["statement"] == "INSERT INTO outbox (recipient, body) VALUES ($1, $2); COMMIT"


def test_checking_before_retrying_leaves_one_row(box: Sandbox) -> None:
    """Fails if the lost commit did not land (the check would find nothing and both
    agents would look alike) or a read-only retry is broken too."""
    door = door_of(box)
    url = door.open(ACK_LOST_ONCE, seed=1, identity=None)
    assert check_first(url, "invoice 8 is due") == 2
    log = door.close()
    assert copies(box, "invoice 8 is due") == 1
    assert [f["kind"] for f in log.faults] == ["ack_lost_after_commit"]


def test_autocommit_statement_is_its_own_commit(box: Sandbox) -> None:
    """Fails if only an explicit COMMIT is taken for a commit: an autocommit INSERT
    commits when its Sync is answered, and the record names the INSERT."""
    door = door_of(box)
    url = door.open(ACK_LOST_ONCE, seed=1, identity=None)
    assert blind_retry(url, "autocommit", autocommit=True) == 2
    log = door.close()
    assert copies(box, "autocommit") == 2
    [fault] = log.faults
    assert fault["statement"] == "INSERT INTO outbox (recipient, body) VALUES ($1, $2)"


def test_fail_before_commit_rolls_the_write_back(box: Sandbox) -> None:
    """Fails if COMMIT is forwarded before the drop (the row would be there twice)."""
    door = door_of(box)
    url = door.open([FaultRule(kind="fail_before_commit", limit=1)], seed=1, identity=None)
    assert blind_retry(url, "once") == 2
    log = door.close()
    assert copies(box, "once") == 1
    [fault] = log.faults
    assert (fault["kind"], fault["committed"], fault["applied"]) == ("fail_before_commit", False, 0)


def test_timeout_holds_the_answer_then_drops_with_the_write_landed(box: Sandbox) -> None:
    """Fails if the timed-out commit is rolled back or its answer reaches the client."""
    door = door_of(box, hold=0.2)
    url = door.open([FaultRule(kind="timeout_after_commit")], seed=1, identity=None)
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO outbox (recipient, body) VALUES ('ops', 'slow')")
        with pytest.raises(psycopg.OperationalError):
            conn.commit()
    log = door.close()
    assert copies(box, "slow") == 1
    assert [(f["kind"], f["committed"]) for f in log.faults] == [("timeout_after_commit", True)]


def test_one_query_with_begin_insert_commit_and_reads_alone_are_told_apart(box: Sandbox) -> None:
    """Fails if a read-only transaction draws a fault, or a simple query that opens and
    commits its own block is not taken for a commit."""
    door = door_of(box)
    url = door.open([FaultRule(kind="ack_lost_after_commit")], seed=1, identity=None)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("BEGIN; SELECT count(*) FROM account; COMMIT")
        conn.execute("SELECT 'COMMIT; INSERT'")
        with pytest.raises(psycopg.OperationalError):
            conn.execute("BEGIN; INSERT INTO outbox (recipient, body) VALUES ('a', 'b'); COMMIT")
    log = door.close()
    assert copies(box, "b") == 1
    [fault] = log.faults
    assert fault["statement"] == "INSERT INTO outbox (recipient, body) VALUES ('a', 'b'); COMMIT"


def test_the_agent_lands_in_its_run_as_its_role_whatever_it_asks(box: Sandbox) -> None:
    """Fails if the startup packet's user or database reaches the server unchanged."""
    door = door_of(box)
    url = door.open([], seed=1, identity=None)
    elsewhere = url.rsplit("/", 1)[0].replace("://", "://postgres:x@", 1).split("@", 1)
    other = f"postgresql://postgres@{elsewhere[-1].split('@')[-1]}/postgres"
    with psycopg.connect(other, autocommit=True) as conn:
        database, user = conn.execute("SELECT current_database(), session_user").fetchone() or ()
    door.close()
    assert database == box.database  # type: ignore[attr-defined]
    assert user.startswith("kaudit_a_")


def test_a_cancel_request_reaches_the_server(box: Sandbox) -> None:
    """Fails if the proxy swallows CancelRequest packets: the sleep would end by the
    statement timeout (a different error) instead of the user's cancel.

    `cancel_safe`: the binary driver's blocking `cancel` holds the GIL, which would
    starve this in-process proxy; an agent runs in its own process.
    """
    door = door_of(box)
    url = door.open([], seed=1, identity=None)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET statement_timeout = '20s'")
        timer = threading.Timer(0.3, conn.cancel_safe)
        timer.start()
        try:
            with pytest.raises(psycopg.errors.QueryCanceled, match="user request"):
                conn.execute("SELECT pg_sleep(15)")
        finally:
            timer.cancel()
            timer.join()
    door.close()


def test_a_start_that_times_out_stops_the_listener_it_was_bringing_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fails if `stop` before the serving thread has its loop signals nothing: the late
    listener then serves forever, on a port no run knows."""
    serve = WireProxy._serve

    async def slow(self: WireProxy, ready: Future[int]) -> None:
        await asyncio.sleep(0.5)  # the caller's patience runs out first
        await serve(self, ready)

    monkeypatch.setattr(WireProxy, "_serve", slow)
    monkeypatch.setattr("kaudit.postgres._proxy._START_TIMEOUT", 0.1)
    proxy = WireProxy(Upstream("127.0.0.1", 1), database="d", user="u", faults=WireFaults([], 1))
    with pytest.raises(SubstrateError, match="the PostgreSQL proxy cannot listen"):
        proxy.start()
    assert proxy._thread is not None
    proxy._thread.join(timeout=5)
    assert not proxy._thread.is_alive()
