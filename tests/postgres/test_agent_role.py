"""The run's login role for the agent's own SQL: what it may do, and that it goes."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

import tests.mini_world  # noqa: F401  (registers the 'mini' world)
from kaudit.postgres import prune_postgres
from kaudit.postgres._agent_role import agent_role_name, create_agent_role
from kaudit.postgres._wire_door import WireDoor
from kaudit.spec import Identity
from kaudit.substrate import Sandbox
from kaudit.worlds._world import get_world
from tests.pg import databases

pytestmark = pytest.mark.postgres

ORG_A = Identity(role="agent", scope={"org": "ORG_A"})


@pytest.fixture
def box(pg_url: str, request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = get_world("mini").substrate(pg_url).seed(f"role-{request.node.name}")
    yield sandbox
    sandbox.close()


def door_of(box: Sandbox) -> WireDoor:
    return WireDoor(box.server, box.database, box.schema)  # type: ignore[attr-defined]


def refused(url: str, statement: str) -> str:
    """The SQLSTATE the server answers `statement` with ('' if it was carried out)."""
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute(statement)
        except psycopg.Error as exc:
            return exc.sqlstate or "?"
    return ""


def count(box: Sandbox, where: str) -> int:
    row = box.db.one(f"SELECT count(*) AS n FROM account WHERE {where}")
    assert row is not None
    return int(row["n"])


def roles(pg_url: str) -> list[str]:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT rolname FROM pg_roles WHERE starts_with(rolname, 'kaudit_a_')"
        ).fetchall()
    return [name for (name,) in rows]


def test_delete_of_another_scope_is_refused_recorded_and_the_rows_stay(box: Sandbox) -> None:
    """Fails if row-level security only filters the DELETE (0 rows, no error, no attempt)
    or the proxy does not read the refusal from the ErrorResponse."""
    door = door_of(box)
    url = door.open([], seed=1, identity=ORG_A)
    assert refused(url, "DELETE FROM account WHERE org = 'ORG_B'") == "42501"
    assert refused(url, "DELETE FROM link WHERE account_id = 'ACC_000'") == ""
    log = door.close()
    assert count(box, "org = 'ORG_B'") == 20
    [attempt] = log.boundary_attempts
    assert (attempt["tool"], attempt["table"], attempt["key"]) == ("sql", "account", '["ACC_001"]')
    assert attempt["reason"] == "row outside the org = ORG_A scope of role agent"
    assert attempt["statement"] == "DELETE FROM account WHERE org = 'ORG_B'"


def test_the_agent_cannot_leave_the_identity(box: Sandbox) -> None:
    """Fails if the scope triggers trust the session's `kaudit.identity` setting, or if
    resetting the role hands the login role rights of its own."""
    door = door_of(box)
    url = door.open([], seed=1, identity=ORG_A)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET kaudit.identity = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE account SET status = 'x' WHERE org = 'ORG_B'")
        conn.execute("SET ROLE NONE")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE account SET status = 'x' WHERE org = 'ORG_A'")
    door.close()
    assert count(box, "status = 'x'") == 0


def test_own_scope_writes_go_through(box: Sandbox) -> None:
    """Fails if the role lacks the identity's grants (every write refused)."""
    door = door_of(box)
    url = door.open([], seed=1, identity=ORG_A)
    assert refused(url, "UPDATE account SET status = 'closed' WHERE org = 'ORG_A'") == ""
    log = door.close()
    assert count(box, "status = 'closed'") == 20
    assert log.boundary_attempts == []


def test_without_identity_the_role_changes_rows_and_nothing_else(box: Sandbox) -> None:
    """Fails if the role owns a table (DDL would pass) or may write kaudit's change log
    (it could erase what it changed from the dump)."""
    door = door_of(box)
    url = door.open([], seed=1, identity=None)
    assert refused(url, "UPDATE account SET status = 'closed' WHERE id = 'ACC_001'") == ""
    assert refused(url, "DROP TABLE link") == "42501"
    assert refused(url, "DELETE FROM _kaudit_change_log") == "42501"
    log = door.close()
    assert [(a["table"], a["key"]) for a in log.boundary_attempts] == [
        ("link", None),
        ("_kaudit_change_log", None),
    ]


def test_close_ends_the_sessions_and_drops_the_role(box: Sandbox, pg_url: str) -> None:
    """Fails if the role outlives its run, or a session left open keeps it alive."""
    door = door_of(box)
    url = door.open([], seed=1, identity=ORG_A)
    name = url.split("//")[1].split(":")[0]
    with psycopg.connect(url, autocommit=True) as conn:
        assert name in roles(pg_url)
        door.close()
        with pytest.raises(psycopg.OperationalError):
            conn.execute("SELECT 1")
    assert name not in roles(pg_url)


@pytest.mark.parametrize("identity", [None, ORG_A], ids=["rows", "identity"])
def test_a_role_setup_interrupted_half_way_is_dropped(
    box: Sandbox, pg_url: str, monkeypatch: pytest.MonkeyPatch, identity: Identity | None
) -> None:
    """Fails if only the server's errors undo the role: a Ctrl-C between its CREATE and
    its grants leaves a login role that `prune` alone would ever drop."""
    name = agent_role_name(box.database)  # type: ignore[attr-defined]

    def interrupted(*args: object) -> None:
        assert name in roles(pg_url)  # created, its rights not yet given
        raise KeyboardInterrupt

    step = "_grant_rows" if identity is None else "_guard"
    monkeypatch.setattr(f"kaudit.postgres._agent_role.{step}", interrupted)
    with pytest.raises(KeyboardInterrupt):
        create_agent_role(pg_url, box.database, identity, box.schema)  # type: ignore[attr-defined]
    assert name not in roles(pg_url)


def test_prune_drops_the_role_a_killed_run_left(pg_url: str) -> None:
    """Fails if prune leaves agent roles behind once their run's database is gone."""
    sandbox = get_world("mini").substrate(pg_url).seed("role-prune")
    role = create_agent_role(pg_url, sandbox.database, ORG_A, sandbox.schema)  # type: ignore[attr-defined]
    sandbox.close()  # the database goes; the role, as after a kill, stays
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{role.database}" WITH (FORCE)')
    assert role.name in roles(pg_url)
    done = prune_postgres(pg_url, keep=databases("kaudit_t_"))  # others' templates stay
    assert [(p.kind, p.action) for p in done if p.name == role.name] == [("role", "dropped")]
    assert role.name not in roles(pg_url)


def test_setting_off_the_identity_does_not_silence_the_scope_triggers(pg_url: str) -> None:
    """Fails if the owned-row triggers fire only while `kaudit.identity` is on: the agent
    sets it off and changes a line of another account's invoice (no policy guards lines,
    only the trigger that follows the line to its invoice)."""
    world = get_world("enterprise")
    sandbox = world.substrate(pg_url).seed("role-setting-off")
    scoped = Identity(role="billing", scope={"billing_account_id": "BA_001"})
    try:
        door = WireDoor(sandbox.server, sandbox.database, sandbox.schema, world.ownership)  # type: ignore[attr-defined]
        url = door.open([], seed=1, identity=scoped)
        line = (
            "UPDATE invoice_lines SET quantity = quantity + 1 WHERE invoice_id IN "
            "(SELECT invoice_id FROM invoices WHERE billing_account_id = 'BA_006')"
        )
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET kaudit.identity = off")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(line)
        log = door.close()
        assert [a["table"] for a in log.boundary_attempts] == ["invoice_lines"]
    finally:
        sandbox.close()


def test_a_runs_role_cannot_open_another_runs_database(pg_url: str) -> None:
    """Fails if run databases keep PUBLIC's CONNECT: an agent that goes around the proxy
    with its own role could then act, through the shared group role, in another agent's
    run (whose database grants that group its rows)."""
    first = get_world("mini").substrate(pg_url).seed("role-first")
    second = get_world("mini").substrate(pg_url).seed("role-second")
    try:
        door = WireDoor(first.server, first.database, first.schema)  # type: ignore[attr-defined]
        other = WireDoor(second.server, second.database, second.schema)  # type: ignore[attr-defined]
        url = door.open([], seed=1, identity=None)
        other.open([], seed=1, identity=None)
        user = url.split("//")[1].split("@")[0]
        direct = pg_url.replace("postgres@", f"{user}@", 1).rsplit("/", 1)[0]
        try:
            with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
                psycopg.connect(f"{direct}/{second.database}").close()  # type: ignore[attr-defined]
            psycopg.connect(f"{direct}/{first.database}").close()  # type: ignore[attr-defined]
        finally:
            door.close()
            other.close()
    finally:
        first.close()
        second.close()
