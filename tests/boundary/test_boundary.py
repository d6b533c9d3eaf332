from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaudit.boundary import BoundaryLayer, SqliteGuard
from kaudit.gateway import ToolGateway
from kaudit.spec import Identity
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import BoundaryViolation, ToolContext, tool
from kaudit.worlds._world import get_world


@pytest.fixture
def sandbox() -> Iterator[SqliteSandbox]:
    box = get_world("mini").substrate().seed("boundary-test")
    yield box
    box.close()


@tool("reversible_write", writes={"account": ("status",)})
def approve_own(ctx: ToolContext, account_id: str) -> dict[str, str]:
    """A tool with its own scope check, as a self-approval check would be."""
    if ctx.identity is not None and ctx.identity.user == account_id:
        raise BoundaryViolation("account", account_id, "an identity cannot approve itself")
    ctx.db.execute("UPDATE account SET status = 'approved' WHERE id = ?", (account_id,))
    return {"approved": account_id}


def bounded(box: SqliteSandbox, identity: Identity) -> tuple[ToolGateway, BoundaryLayer]:
    layer = BoundaryLayer(box.db, SqliteGuard(box.db.conn, identity))
    tools = dict(get_world("mini").tools) | {"approve_own": approve_own}
    return ToolGateway(tools, ToolContext(db=box.db, identity=identity), [layer]), layer


def status(box: SqliteSandbox, account: str) -> str:
    row = box.db.one("SELECT status FROM account WHERE id = ?", (account,))
    assert row is not None
    return str(row["status"])


def test_a_write_to_another_organizations_row_is_blocked_and_recorded(
    sandbox: SqliteSandbox,
) -> None:
    """Fails if the org scope lets a write through or forgets to record the attempt."""
    gateway, layer = bounded(sandbox, Identity(role="agent", scope={"org": "ORG_A"}))
    own = gateway.call("1", "update_account", {"account_id": "ACC_000", "status": "closed"})
    other = gateway.call("2", "update_account", {"account_id": "ACC_001", "status": "closed"})
    assert own.ok and status(sandbox, "ACC_000") == "closed"
    assert not other.ok and other.error is not None and "not permitted" in other.error
    assert status(sandbox, "ACC_001") == "open"
    [attempt] = layer.attempts
    assert (attempt.call, attempt.tool, attempt.table, attempt.key) == (
        1,
        "update_account",
        "account",
        '["ACC_001"]',
    )


@tool("reversible_write", writes={"account": ("org",)})
def move_account(ctx: ToolContext, account_id: str, org: str) -> dict[str, str]:
    """Move an account to another organization."""
    ctx.db.execute("UPDATE account SET org = ? WHERE id = ?", (org, account_id))
    return {"moved": account_id}


def test_moving_a_row_out_of_scope_or_deleting_outside_it_is_blocked(
    sandbox: SqliteSandbox,
) -> None:
    """Fails if the scope checks only the row before the write, or forgets deletes."""
    identity = Identity(role="agent", scope={"org": "ORG_A"})
    layer = BoundaryLayer(sandbox.db, SqliteGuard(sandbox.db.conn, identity))
    tools = dict(get_world("mini").tools) | {"move_account": move_account}
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db, identity=identity), [layer])
    assert not gateway.call("1", "move_account", {"account_id": "ACC_000", "org": "ORG_B"}).ok
    assert not gateway.call("2", "delete_account", {"account_id": "ACC_003"}).ok
    assert [a.key for a in layer.attempts] == ['["ACC_000"]', '["ACC_003"]']
    assert sandbox.dump().digest == sandbox.initial.digest


def test_a_table_outside_the_grant_cannot_be_written(sandbox: SqliteSandbox) -> None:
    """Fails if the authorizer allows an insert into a table the identity was not granted."""
    identity = Identity(role="reader", tables={"account": ("read", "update")})
    gateway, layer = bounded(sandbox, identity)
    sent = gateway.call("1", "send_message", {"recipient": "x@y", "body": "b"})
    deleted = gateway.call("2", "delete_account", {"account_id": "ACC_000"})
    assert not sent.ok and not deleted.ok
    assert [(a.table, a.key) for a in layer.attempts] == [
        ("outbox", None),
        ("account", "account_id=ACC_000"),
    ]
    assert gateway.call("3", "update_account", {"account_id": "ACC_000", "status": "x"}).ok
    assert status(sandbox, "ACC_000") == "x"
    assert sandbox.db.one("SELECT id FROM account WHERE id = 'ACC_000'") == {"id": "ACC_000"}


def test_a_tools_own_scope_check_is_recorded_as_an_attempt(sandbox: SqliteSandbox) -> None:
    """Fails if a BoundaryViolation raised by a tool is not counted as a boundary attempt."""
    gateway, layer = bounded(sandbox, Identity(role="agent", user="ACC_002"))
    assert gateway.call("1", "approve_own", {"account_id": "ACC_004"}).ok
    assert not gateway.call("2", "approve_own", {"account_id": "ACC_002"}).ok
    assert [(a.table, a.key, a.reason) for a in layer.attempts] == [
        ("account", "ACC_002", "an identity cannot approve itself")
    ]
    assert status(sandbox, "ACC_002") == "open"


def test_blocked_attempts_leave_the_dump_identical_to_the_template(
    sandbox: SqliteSandbox,
) -> None:
    """Fails if a refused multi-row write is half-applied, or the guard leaks into the dump."""
    gateway, _ = bounded(sandbox, Identity(role="agent", scope={"org": "ORG_A"}))
    gateway.call("1", "update_account", {"account_id": "ACC_001", "balance": 0})
    gateway.call("2", "delete_account", {"account_id": "ACC_001"})
    assert sandbox.dump().digest == sandbox.initial.digest


@tool("reversible_write", writes={"account": ("status",)})
def close_pair(ctx: ToolContext, first: str, second: str) -> dict[str, str]:
    """Close two accounts with two statements and no transaction of its own."""
    ctx.db.execute("UPDATE account SET status = 'closed' WHERE id = ?", (first,))
    ctx.db.execute("UPDATE account SET status = 'closed' WHERE id = ?", (second,))
    return {"closed": f"{first},{second}"}


def test_a_refused_call_is_rolled_back_whole(sandbox: SqliteSandbox) -> None:
    """Fails if the layer keeps the in-scope half of a call whose second write was refused."""
    identity = Identity(role="agent", scope={"org": "ORG_A"})
    layer = BoundaryLayer(sandbox.db, SqliteGuard(sandbox.db.conn, identity))
    tools = {"close_pair": close_pair}
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db, identity=identity), [layer])
    assert not gateway.call("1", "close_pair", {"first": "ACC_000", "second": "ACC_001"}).ok
    assert status(sandbox, "ACC_000") == "open"
    assert [a.key for a in layer.attempts] == ['["ACC_001"]']
