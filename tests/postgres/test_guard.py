"""The boundary on PostgreSQL against the real server: role grants and row-level security."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.boundary import BoundaryLayer, guard_for
from kaudit.gateway import ToolGateway
from kaudit.postgres._dump import first_difference
from kaudit.postgres._guard import sqlite_json
from kaudit.spec import Identity
from kaudit.substrate import Sandbox
from kaudit.tools import ToolContext, tool
from kaudit.worlds._world import get_world
from tests.pg import server_url

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["clone", "rollback"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    url = server_url() + ("?reset=rollback" if request.param == "rollback" else "")
    box = get_world("mini").substrate(url).seed(f"boundary-pg-{request.param}")
    yield box
    box.close()


@tool("reversible_write", writes={"account": ("org",)})
def move_account(ctx: ToolContext, account_id: str, org: str) -> dict[str, str]:
    """Move an account to another organization."""
    ctx.db.execute("UPDATE account SET org = ? WHERE id = ?", (org, account_id))
    return {"moved": account_id}


@tool("reversible_write", writes={"account": ("status",)})
def close_pair(ctx: ToolContext, first: str, second: str) -> dict[str, str]:
    """Close two accounts with two statements and no transaction of its own."""
    ctx.db.execute("UPDATE account SET status = 'closed' WHERE id = ?", (first,))
    ctx.db.execute("UPDATE account SET status = 'closed' WHERE id = ?", (second,))
    return {"closed": f"{first},{second}"}


def bounded(box: Sandbox, identity: Identity) -> tuple[ToolGateway, BoundaryLayer]:
    layer = BoundaryLayer(box.db, guard_for(box, identity))
    tools = dict(get_world("mini").tools) | {"move_account": move_account, "close_pair": close_pair}
    return ToolGateway(tools, ToolContext(db=box.db, identity=identity), [layer]), layer


def unchanged(box: Sandbox) -> bool:
    return first_difference(box.initial, box.dump().image) is None


def status(box: Sandbox, account: str) -> str:
    row = box.db.one("SELECT status FROM account WHERE id = ?", (account,))
    assert row is not None
    return str(row["status"])


def test_row_level_security_blocks_a_write_outside_the_org_and_records_it(
    sandbox: Sandbox,
) -> None:
    """Fails if the policy only filters the other org's row (a silent no-op, no attempt)."""
    gateway, layer = bounded(sandbox, Identity(role="agent", scope={"org": "ORG_A"}))
    own = gateway.call("1", "update_account", {"account_id": "ACC_000", "status": "closed"})
    other = gateway.call("2", "update_account", {"account_id": "ACC_001", "status": "closed"})
    assert own.ok and status(sandbox, "ACC_000") == "closed"
    assert not other.ok and other.error is not None and "not permitted" in other.error
    assert status(sandbox, "ACC_001") == "open"
    [attempt] = layer.attempts
    assert (attempt.call, attempt.tool, attempt.table, attempt.key, attempt.reason) == (
        1,
        "update_account",
        "account",
        '["ACC_001"]',
        "row outside the org = ORG_A scope of role agent",
    )


def test_moving_a_row_out_of_scope_or_deleting_outside_it_is_blocked(sandbox: Sandbox) -> None:
    """Fails if the policy checks only the row before the write (no WITH CHECK), or no DELETE."""
    gateway, layer = bounded(sandbox, Identity(role="agent", scope={"org": "ORG_A"}))
    assert not gateway.call("1", "move_account", {"account_id": "ACC_000", "org": "ORG_B"}).ok
    assert not gateway.call("2", "delete_account", {"account_id": "ACC_003"}).ok
    assert [a.key for a in layer.attempts] == ['["ACC_000"]', '["ACC_003"]']
    assert unchanged(sandbox)


def test_a_table_outside_the_grant_cannot_be_written(sandbox: Sandbox) -> None:
    """Fails if the role is granted more than the identity's tables (or the owner's rights)."""
    gateway, layer = bounded(
        sandbox, Identity(role="reader", tables={"account": ("read", "update")})
    )
    sent = gateway.call("1", "send_message", {"recipient": "x@y", "body": "b"})
    deleted = gateway.call("2", "delete_account", {"account_id": "ACC_000"})
    assert not sent.ok and not deleted.ok
    assert [(a.table, a.key, a.reason) for a in layer.attempts] == [
        ("outbox", None, "role reader may not insert outbox"),
        ("account", "account_id=ACC_000", "role reader may not delete account"),
    ]
    assert gateway.call("3", "update_account", {"account_id": "ACC_000", "status": "x"}).ok
    assert status(sandbox, "ACC_000") == "x"


def test_a_refused_call_is_rolled_back_whole_and_the_dump_reads_as_the_owner(
    sandbox: Sandbox,
) -> None:
    """Fails if the in-scope half of a refused call is kept, or the role outlives the call."""
    gateway, layer = bounded(sandbox, Identity(role="agent", scope={"org": "ORG_A"}))
    assert not gateway.call("1", "close_pair", {"first": "ACC_000", "second": "ACC_001"}).ok
    assert status(sandbox, "ACC_000") == "open"
    assert [a.key for a in layer.attempts] == ['["ACC_001"]']
    assert unchanged(sandbox)
    assert gateway.call("2", "update_account", {"account_id": "ACC_000", "status": "x"}).ok
    assert sandbox.db.one("SELECT current_user = session_user AS owner") == {"owner": True}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.one_of(st.integers(-(2**62), 2**62), st.text(max_size=8)), min_size=1, max_size=3)
)
def test_a_key_reads_as_sqlites_json_array_writes_it(key: list[int | str]) -> None:
    """Bug caught: PostgreSQL's `[1, "a"]` kept as is, so a composite or unicode key is
    recorded differently from SQLite's `[1,"a"]` and the attempts no longer compare."""
    values = [v.replace("\x00", "") if isinstance(v, str) else v for v in key]
    marks = ", ".join("?" for _ in values)
    lite = sqlite3.connect(":memory:").execute(f"SELECT json_array({marks})", values).fetchone()[0]
    with psycopg.connect(server_url(), autocommit=True) as conn:
        casts = ", ".join("%s::bigint" if isinstance(v, int) else "%s::text" for v in values)
        row = conn.execute(f"SELECT json_build_array({casts})::text".encode(), values).fetchone()
    assert row is not None
    assert sqlite_json(row[0]) == lite


CASCADE_WORLD = """
CREATE TABLE account (id TEXT PRIMARY KEY, org TEXT NOT NULL);
CREATE TABLE ticket (id TEXT PRIMARY KEY, org TEXT NOT NULL,
                     account_id TEXT REFERENCES account (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE note (id INTEGER PRIMARY KEY, org TEXT NOT NULL,
                   account_id TEXT REFERENCES account (id) ON DELETE SET NULL);
INSERT INTO account VALUES ('A1', 'ORG_A'), ('A2', 'ORG_A'), ('A3', 'ORG_A');
INSERT INTO ticket VALUES ('T1', 'ORG_A', 'A1'), ('T2', 'ORG_B', 'A1'), ('T3', 'ORG_A', 'A2');
INSERT INTO note VALUES (1, 'ORG_A', 'A2'), (2, 'ORG_B', 'A3');
"""


@tool("irreversible", writes={"account": ("*",)})
def remove_account(ctx: ToolContext, account_id: str) -> dict[str, str]:
    """Delete an account (its tickets go with it, its notes lose it)."""
    ctx.db.execute("DELETE FROM account WHERE id = ?", (account_id,))
    return {"deleted": account_id}


@tool("reversible_write", writes={"account": ("id",)})
def rekey_account(ctx: ToolContext, account_id: str, new_id: str) -> dict[str, str]:
    """Give an account a new id (its tickets follow)."""
    ctx.db.execute("UPDATE account SET id = ? WHERE id = ?", (new_id, account_id))
    return {"renamed": new_id}


CASCADE_CALLS = [
    ("remove_account", {"account_id": "A2"}),  # cascades into T3 and note 1: all in scope
    ("remove_account", {"account_id": "A1"}),  # would cascade into ORG_B's ticket T2
    ("rekey_account", {"account_id": "A1", "new_id": "A9"}),  # would re-point T2
    ("remove_account", {"account_id": "A3"}),  # would SET NULL on ORG_B's note 2
]


def _cascade_run(choice: str) -> tuple[list[bool], list[tuple[object, ...]], list[object]]:
    from kaudit.label.diff import diff_images
    from kaudit.substrate import Blueprint
    from kaudit.substrate._choice import open_substrate
    from kaudit.substrate._sqlite import build_image

    image = build_image(lambda conn: conn.executescript(CASCADE_WORLD))
    tools = {t.name: t for t in (remove_account, rekey_account)}
    substrate = open_substrate(choice, Blueprint("cascade", image, tools))
    box = substrate.seed("kaudit_i14_cascade/m/t/0")
    try:
        identity = Identity(role="agent", scope={"org": "ORG_A"})
        layer = BoundaryLayer(box.db, guard_for(box, identity))
        gateway = ToolGateway(tools, ToolContext(db=box.db, identity=identity), [layer])
        oks = [gateway.call(str(i), name, args).ok for i, (name, args) in enumerate(CASCADE_CALLS)]
        final = box.dump()
    finally:
        box.close()
    attempts = [(a.call, a.tool, a.table, a.key, a.reason) for a in layer.attempts]
    changes = diff_images(image, final.image, fast=False)
    return oks, attempts, sorted((c.table, c.key, c.op) for c in changes)


@pytest.mark.parametrize("reset", ["clone", "rollback"])
def test_a_cascade_into_an_out_of_scope_row_is_refused_as_on_sqlite(reset: str) -> None:
    """Bug caught: a cascaded delete, update or SET NULL (run by PostgreSQL as the table
    owner, unseen by row-level security) changing another organization's row that the
    SQLite scope triggers refuse, so the verdicts and boundary attempts differ."""
    url = server_url() + ("?reset=rollback" if reset == "rollback" else "")
    on_sqlite, on_postgres = _cascade_run("sqlite"), _cascade_run(url)
    assert on_postgres == on_sqlite
    oks, attempts, changes = on_postgres
    assert oks == [True, False, False, False]
    reason = "row outside the org = ORG_A scope of role agent"
    assert attempts == [
        (1, "remove_account", "ticket", '["T2"]', reason),
        (2, "rekey_account", "ticket", '["T2"]', reason),
        (3, "remove_account", "note", "[2]", reason),
    ]
    assert [(table, op) for table, _, op in changes] == [
        ("account", "removed"),
        ("note", "modified"),
        ("ticket", "removed"),
    ]


GRANT_WORLD = """
CREATE TABLE account (id TEXT PRIMARY KEY, name TEXT);
CREATE TABLE ticket (id TEXT PRIMARY KEY,
                     account_id TEXT REFERENCES account (id) ON DELETE CASCADE ON UPDATE CASCADE);
INSERT INTO account VALUES ('A1', 'one'), ('A2', 'two'), ('A3', 'three');
INSERT INTO ticket VALUES ('T1', 'A1'), ('T2', 'A2');
"""


@tool("reversible_write", writes={"account": ("name",)})
def rename_account(ctx: ToolContext, account_id: str, name: str) -> dict[str, str]:
    """Rename an account (no key changes, no foreign key involved)."""
    ctx.db.execute("UPDATE account SET name = ? WHERE id = ?", (name, account_id))
    return {"renamed": account_id}


@tool("reversible_write", writes={"ticket": ("*",)})
def open_ticket(ctx: ToolContext, ticket_id: str, account_id: str) -> dict[str, str]:
    """Open a ticket on an account (its foreign key is checked against the account)."""
    ctx.db.execute("INSERT INTO ticket VALUES (?, ?)", (ticket_id, account_id))
    return {"opened": ticket_id}


@tool("reversible_write", writes={"account": ("*",)})
def open_account(ctx: ToolContext, account_id: str, name: str) -> dict[str, str]:
    """Open an account (a parent: SQLite scans its tickets for the insert)."""
    ctx.db.execute("INSERT INTO account VALUES (?, ?)", (account_id, name))
    return {"opened": account_id}


@tool("reversible_write", writes={"account": ("*",)})
def save_account(ctx: ToolContext, account_id: str, name: str) -> dict[str, str]:
    """Open an account, or rename it if it exists (an UPSERT)."""
    ctx.db.execute(
        "INSERT INTO account VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name",
        (account_id, name),
    )
    return {"saved": account_id}


GRANT_TOOLS = {
    t.name: t
    for t in (
        remove_account,
        rekey_account,
        rename_account,
        open_ticket,
        open_account,
        save_account,
    )
}
CLERK = Identity(
    role="clerk", tables={"account": ("read", "update", "delete"), "ticket": ("read",)}
)
GRANT_CASES = [
    (CLERK, "remove_account", {"account_id": "A2"}),  # would cascade into ticket T2
    (CLERK, "remove_account", {"account_id": "A3"}),  # no ticket, refused all the same
    (CLERK, "rekey_account", {"account_id": "A1", "new_id": "A9"}),  # would re-point T1
    (CLERK, "rename_account", {"account_id": "A1", "name": "uno"}),  # no foreign key: allowed
    (
        Identity(role="opener", tables={"ticket": ("read", "insert")}),
        "open_ticket",
        {"ticket_id": "T9", "account_id": "A1"},
    ),  # the check reads account
    (
        Identity(
            role="owner", tables={"account": ("read", "delete"), "ticket": ("read", "delete")}
        ),
        "remove_account",
        {"account_id": "A2"},
    ),  # every right the cascade needs
    (
        Identity(role="opener", tables={"account": ("read", "insert")}),
        "open_account",
        {"account_id": "A8", "name": "eight"},
    ),  # the insert's scan reads ticket
    (
        Identity(role="opener", tables={"account": ("read", "insert"), "ticket": ("read",)}),
        "open_account",
        {"account_id": "A8", "name": "eight"},
    ),  # every right the scan needs
    (
        Identity(role="saver", tables={"account": ("read", "insert"), "ticket": ("read",)}),
        "save_account",
        {"account_id": "A1", "name": "uno"},
    ),  # an UPSERT needs update on its own table
    (
        Identity(role="saver", tables={"account": ("read", "insert", "update")}),
        "save_account",
        {"account_id": "A1", "name": "uno"},
    ),  # and the insert's scan of ticket
    (
        Identity(
            role="saver", tables={"account": ("read", "insert", "update"), "ticket": ("read",)}
        ),
        "save_account",
        {"account_id": "A1", "name": "uno"},
    ),  # every right it needs: A1 renamed
]


def _grant_run(choice: str) -> tuple[list[bool], list[tuple[object, ...]], list[object]]:
    from kaudit.label.diff import diff_images
    from kaudit.substrate import Blueprint
    from kaudit.substrate._choice import open_substrate
    from kaudit.substrate._sqlite import build_image

    image = build_image(lambda conn: conn.executescript(GRANT_WORLD))
    substrate = open_substrate(choice, Blueprint("grants", image, GRANT_TOOLS))
    oks, attempts, changes = [], [], []
    for i, (identity, name, args) in enumerate(GRANT_CASES):
        box = substrate.seed(f"kaudit_grant_cascade/m/t/{i}")
        try:
            layer = BoundaryLayer(box.db, guard_for(box, identity))
            context = ToolContext(db=box.db, identity=identity)
            gateway = ToolGateway(GRANT_TOOLS, context, [layer])
            oks.append(gateway.call(str(i), name, args).ok)
            final = box.dump()
        finally:
            box.close()
        attempts += [(i, a.tool, a.table, a.key, a.reason) for a in layer.attempts]
        changes += sorted((i, c.table, c.key, c.op) for c in diff_images(image, final.image))
    return oks, attempts, changes


@pytest.mark.parametrize("reset", ["clone", "rollback"])
def test_the_table_grant_covers_foreign_key_actions_and_checks_as_on_sqlite(reset: str) -> None:
    """Bug caught: PostgreSQL running a cascade (or a key check) as the table owner, so
    an identity with no delete or update right on `ticket` deletes or re-points its rows
    through ON DELETE / ON UPDATE CASCADE, and one with no read right on `account`
    inserts a ticket whose key check reads it, all of which SQLite's authorizer refuses:
    one run, two verdicts. Also fails if an insert into `account` needs nothing of
    `ticket` (SQLite's authorizer, with the change-capture triggers every sandbox has,
    asks `read` on each child for it), or if an UPSERT's refused update is recorded as a
    refused read."""
    url = server_url() + ("?reset=rollback" if reset == "rollback" else "")
    on_sqlite, on_postgres = _grant_run("sqlite"), _grant_run(url)
    assert on_postgres == on_sqlite
    oks, attempts, changes = on_postgres
    assert oks == [False, False, False, True, False, True, False, True, False, False, True]
    assert attempts == [
        (0, "remove_account", "ticket", "account_id=A2", "role clerk may not delete ticket"),
        (1, "remove_account", "ticket", "account_id=A3", "role clerk may not delete ticket"),
        (
            2,
            "rekey_account",
            "ticket",
            "account_id=A1, new_id=A9",
            "role clerk may not update ticket",
        ),
        (
            4,
            "open_ticket",
            "account",
            "ticket_id=T9, account_id=A1",
            "role opener may not read account",
        ),
        (6, "open_account", "ticket", "account_id=A8", "role opener may not read ticket"),
        (8, "save_account", "account", "account_id=A1", "role saver may not update account"),
        (9, "save_account", "ticket", "account_id=A1", "role saver may not read ticket"),
    ]
    assert [(i, table, op) for i, table, _, op in changes] == [
        (3, "account", "modified"),
        (5, "account", "removed"),
        (5, "ticket", "removed"),
        (7, "account", "added"),
        (10, "account", "modified"),
    ]
