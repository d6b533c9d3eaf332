"""A dump freezes the sandbox's state in place: read it, take its bytes, never change it."""

from __future__ import annotations

import sqlite3

import pytest

from kaudit.errors import SubstrateError
from kaudit.label.diff import diff_images
from kaudit.substrate import DatabaseError, FrozenState, SqliteSubstrate
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.worlds._world import get_world


def fresh(substrate: SqliteSubstrate, run_id: str) -> SqliteSandbox:
    """A sandbox on its own connection (no pool), as before pooling."""
    return SqliteSandbox(run_id, substrate.template)


def mini() -> SqliteSubstrate:
    substrate = get_world("mini").substrate()
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


@pytest.mark.parametrize("pooled", [False, True])
def test_a_dump_refuses_every_write_after_it_is_taken(pooled: bool) -> None:
    """Fails if the frozen connection lost its authorizer (`PRAGMA query_only = OFF` would
    then pass and the UPDATE after it change the dumped state), or if query_only were not
    set (the raw UPDATE would pass). Tried by hand: no set_authorizer in FrozenState."""
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else fresh(substrate, "r")
    sandbox.db.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_001'")
    frozen = sandbox.dump()
    with pytest.raises(DatabaseError):
        sandbox.db.execute("UPDATE account SET status = 'open' WHERE id = 'ACC_001'")
    with frozen.guarded() as (conn, _):
        for sql in ("PRAGMA query_only = OFF", "UPDATE account SET name = 'x'", "COMMIT"):
            with pytest.raises(sqlite3.DatabaseError):
                conn.execute(sql)
    # kaudit's own reads may do more, but never write.
    with frozen.reading() as conn, pytest.raises(sqlite3.DatabaseError):
        conn.execute("DELETE FROM account")
    changes = diff_images(substrate.template.image, frozen.image)
    assert [(c.table, c.op, c.after and c.after["status"]) for c in changes] == [
        ("account", "modified", "closed")
    ]
    sandbox.close()
    frozen.release()


def test_the_image_is_taken_once_and_outlives_close_and_release() -> None:
    """Fails if `close()` after a dump closed the connection the dump reads, or if the
    bytes were taken again after release (they would be gone)."""
    substrate = mini()
    sandbox = fresh(substrate, "r")
    sandbox.db.execute("DELETE FROM outbox")
    sandbox.db.execute("INSERT INTO outbox (recipient, body) VALUES ('a', 'b')")
    frozen = sandbox.dump()
    assert sandbox.dump() is frozen
    sandbox.close()
    assert frozen.schema().tables["outbox"].primary_key == ("id",)
    image = frozen.image
    frozen.release()
    assert frozen.image is image and len(diff_images(substrate.template.image, image)) == 1
    with pytest.raises(SubstrateError, match="released"), frozen.reading():
        pass


def test_an_open_atomic_block_cannot_be_dumped() -> None:
    """Fails if a pooled dump ignored an open `atomic()` block (its half-done writes would
    be judged as the agent's final state)."""
    sandbox = mini().seed("r")
    with sandbox.db.atomic():
        sandbox.db.execute("UPDATE account SET status = 'x' WHERE id = 'ACC_002'")
        with pytest.raises(SubstrateError, match="inside a transaction"):
            sandbox.dump()
    assert isinstance(sandbox.dump(), FrozenState)
    sandbox.dump().release()


@pytest.mark.parametrize("pooled", [False, True])
def test_a_temporary_table_never_answers_for_a_main_table_after_the_dump(pooled: bool) -> None:
    """Fails if temporary tables and views outlived the freeze: a temp `account` copied
    before the run closed an account (or a temp view named `pragma_table_list`) would
    answer a check's unqualified name, or the schema reader, instead of the final state.
    Tried by hand: no `shadows_dropped` call in `SqliteSandbox._freeze`."""
    from kaudit.substrate import _schema

    substrate = mini()
    sandbox = substrate.seed("r") if pooled else fresh(substrate, "r")
    sandbox.db.execute("CREATE TEMP TABLE account AS SELECT * FROM main.account")
    sandbox.db.execute(
        "CREATE TEMP VIEW pragma_table_list AS "
        "SELECT 'main' AS schema, 'account' AS name, 1 AS wr, 'table' AS type"
    )
    sandbox.db.execute("UPDATE main.account SET status = 'closed' WHERE id = 'ACC_001'")
    frozen = sandbox.dump()
    sandbox.close()
    with frozen.guarded() as (conn, _):
        opened = conn.execute("SELECT count(*) FROM account WHERE status = 'open'").fetchone()
    assert opened == (39,)
    _schema._CACHE.clear()  # read the schema again, through pragma_table_list
    assert frozen.schema().tables["account"].has_rowid
    frozen.release()


@pytest.mark.parametrize("pooled", [False, True])
def test_a_state_the_run_attached_or_set_a_pragma_on_is_read_on_a_fresh_copy(pooled: bool) -> None:
    """Fails if the frozen state were read on a connection the run attached a database
    to or changed a PRAGMA on: a check naming the table the run dropped found the
    attached copy, and `case_sensitive_like` changed what LIKE matches. Tried by hand:
    `_freeze` ignoring `touched` (the check then counts 40 links)."""
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else fresh(substrate, "r")
    sandbox.db.execute("ATTACH ':memory:' AS shadow")
    sandbox.db.execute("CREATE TABLE shadow.link AS SELECT * FROM main.link")
    sandbox.db.execute("DROP TABLE main.link")
    sandbox.db.execute("PRAGMA case_sensitive_like = ON")
    frozen = sandbox.dump()
    sandbox.close()
    with frozen.guarded() as (conn, _):
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            conn.execute("SELECT count(*) FROM link")
        assert conn.execute("SELECT count(*) FROM account WHERE name LIKE 'acme%'").fetchone()[0]
    changes = diff_images(substrate.template.image, frozen.image)
    assert {(c.table, c.op) for c in changes} == {("link", "schema"), ("link", "removed")}
    frozen.release()
