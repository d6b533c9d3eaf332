"""A boundary's scope triggers on pooled sandboxes: kept for the same scope, never leaked.

Runs go through `guard_for`, as a campaign's do, so a pooled connection may hand the
next run the triggers the last one made (`SqliteSandbox.hold_script`).
"""

from __future__ import annotations

import pytest

from kaudit.boundary import guard_for
from kaudit.spec import Identity
from kaudit.substrate import DatabaseError, SqliteSubstrate, _pool
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.worlds._world import get_world

OUT_OF_ORG_A = "UPDATE account SET name = 'x' WHERE id = 'ACC_001'"  # an ORG_B account
IN_ORG_A = "UPDATE account SET name = 'x' WHERE id = 'ACC_000'"


@pytest.fixture
def one_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one idle connection: the next run takes it whatever script it holds.

    A larger pool seeds a fresh connection rather than hand a script-holding one to a
    run that may not want it; these tests are about the run that gets one anyway.
    """
    monkeypatch.setattr(_pool, "IDLE_PER_WORLD", 1)


def mini() -> SqliteSubstrate:
    substrate = get_world("mini").substrate()
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


def temp_objects(box: SqliteSandbox) -> int:
    row = box.db.one("SELECT count(*) AS n FROM temp.sqlite_master")
    assert row is not None
    return int(row["n"])


@pytest.mark.usefixtures("one_idle")
def test_the_next_run_with_the_same_scope_reuses_the_triggers_and_is_still_bounded() -> None:
    """Fails if release drops the held script (no reuse: the pool's tag is None), if the
    kept triggers stop refusing, or if they report to the previous run's guard (the
    denial would be missing from the second run's notes)."""
    substrate = mini()
    identity = Identity(role="agent", scope={"org": "ORG_A"})
    first = substrate.seed("r1")
    guard_for(first, identity)
    with pytest.raises(DatabaseError):
        first.db.execute(OUT_OF_ORG_A)
    first.close()
    [(_, held)] = substrate._pool._idle  # type: ignore[union-attr]
    assert held is not None and "kaudit_scope_" in held
    second = substrate.seed("r2")
    assert second.db.conn is first.db.conn
    guard = guard_for(second, identity)
    with pytest.raises(DatabaseError):
        second.db.execute(OUT_OF_ORG_A)
    assert [d.key for d in guard.take()] == ['["ACC_001"]']  # type: ignore[attr-defined]
    assert second.db.execute(IN_ORG_A) == 1
    second.close()


@pytest.mark.usefixtures("one_idle")
def test_a_run_under_another_scope_or_none_sees_only_its_own_boundary() -> None:
    """Fails if a pooled connection hands one identity's triggers to a run with another
    scope (ORG_B's own rows refused), to a run whose identity has no scope, or to a run
    with no identity at all (temp objects a fresh sandbox does not have)."""
    substrate = mini()
    first = substrate.seed("a")
    guard_for(first, Identity(role="agent", scope={"org": "ORG_A"}))
    first.close()
    other = substrate.seed("b")
    guard_for(other, Identity(role="agent", scope={"org": "ORG_B"}))
    assert other.db.execute(OUT_OF_ORG_A) == 1
    with pytest.raises(DatabaseError):
        other.db.execute(IN_ORG_A)
    other.close()
    unscoped = substrate.seed("c")
    assert unscoped.db.conn is first.db.conn
    guard_for(unscoped, Identity(role="agent"))
    assert unscoped.db.execute(IN_ORG_A) == 1 and temp_objects(unscoped) == 0
    unscoped.close()
    guard_for(kept := substrate.seed("d"), Identity(role="agent", scope={"org": "ORG_A"}))
    kept.close()
    free = substrate.seed("e")
    assert temp_objects(free) == 0
    assert free.db.execute(OUT_OF_ORG_A) == 1
    free.close()


@pytest.mark.usefixtures("one_idle")
def test_a_run_without_statements_freezes_no_earlier_scope() -> None:
    """Fails if a run that ran nothing (the agent answered at once) keeps the previous
    run's triggers in its frozen state and hands them on."""
    substrate = mini()
    first = substrate.seed("a")
    guard_for(first, Identity(role="agent", scope={"org": "ORG_A"}))
    first.close()
    idle = substrate.seed("b")
    frozen = idle.dump()
    with frozen.reading() as conn:
        assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)
    idle.close()
    frozen.release()


def test_the_agents_sql_cannot_drop_the_scope_triggers() -> None:
    """Fails if the authorizer lets SQL drop a scope trigger: the rest of the run would
    write outside its scope unrefused. The attempt is noted as a denial."""
    substrate = mini()
    box = substrate.seed("a")
    guard = guard_for(box, Identity(role="agent", scope={"org": "ORG_A"}))
    names = box.db.query("SELECT name FROM temp.sqlite_master WHERE type = 'trigger'")
    assert names
    for row in names:
        with pytest.raises(DatabaseError, match="not authorized"):
            box.db.execute(f"DROP TRIGGER temp.{row['name']}")
    assert any("cannot be changed" in d.reason for d in guard.take())  # type: ignore[attr-defined]
    with pytest.raises(DatabaseError):
        box.db.execute(OUT_OF_ORG_A)
    box.close()


def test_recursive_triggers_cannot_be_turned_off_to_replace_another_scopes_row() -> None:
    """Fails if the authorizer lets `PRAGMA recursive_triggers = OFF` through: then
    `INSERT OR REPLACE` deletes ORG_B's row without firing the delete scope trigger and
    writes an ORG_A row under its key, with no denial."""
    box = mini().seed("a")
    guard = guard_for(box, Identity(role="agent", scope={"org": "ORG_A"}))
    with pytest.raises(DatabaseError, match="not authorized"):
        box.db.execute("PRAGMA recursive_triggers = OFF")
    with pytest.raises(DatabaseError):
        box.db.execute(
            "INSERT OR REPLACE INTO account (id, org, name, balance, status) "
            "VALUES ('ACC_001', 'ORG_A', 'taken', 0, 'open')"
        )
    assert box.db.one("SELECT org FROM account WHERE id = 'ACC_001'") == {"org": "ORG_B"}
    reasons = [d.reason for d in guard.take()]  # type: ignore[attr-defined]
    assert any("recursive triggers" in r for r in reasons)
    box.close()


def test_a_trigger_named_like_the_scope_s_own_cannot_be_made() -> None:
    """Fails if SQL may create a trigger under the scope's prefix: the table check trusts
    what such a trigger runs, so it would delete rows of a table outside the grant."""
    box = mini().seed("a")
    guard_for(box, Identity(role="agent", tables={"account": ("read", "update")}))
    for kind in ("TEMP TRIGGER", "TRIGGER"):
        with pytest.raises(DatabaseError, match="not authorized"):
            box.db.execute(
                f"CREATE {kind} kaudit_scope_x AFTER UPDATE ON main.account "
                "BEGIN DELETE FROM link; END"
            )
    with pytest.raises(DatabaseError, match="not authorized"):
        box.db.execute("CREATE TEMP VIEW kaudit_scope_v AS SELECT * FROM link")
    box.close()


@pytest.mark.usefixtures("one_idle")
def test_a_snapshot_before_the_first_statement_drops_an_earlier_scope() -> None:
    """Fails if leaving the pool before the run's first statement (`snapshot()`) skips
    dropping the previous run's triggers: an unguarded run then has its writes refused."""
    substrate = mini()
    first = substrate.seed("a")
    guard_for(first, Identity(role="agent", scope={"org": "ORG_A"}))
    first.close()
    free = substrate.seed("b")
    assert free.db.conn is first.db.conn
    free.snapshot()
    assert free.db.execute(OUT_OF_ORG_A) == 1 and temp_objects(free) == 0
    free.close()


@pytest.mark.parametrize(
    ("identity", "statements"),
    [
        (Identity(role="agent", tables={"account": ("read", "update")}),
         ["ALTER TABLE account RENAME TO a_old", "ALTER TABLE link RENAME TO account"]),
        (Identity(role="agent", tables={"account": ("read", "update")}),
         ["ALTER TABLE link DROP COLUMN note"]),
        (Identity(role="agent", scope={"org": "ORG_A"}),
         ["ALTER TABLE account DROP COLUMN updated_at"]),
    ],
)  # fmt: skip
def test_alter_table_cannot_swap_a_grant_or_change_rows_outside_the_scope(
    identity: Identity, statements: list[str]
) -> None:
    """Fails if the authorizer let ALTER TABLE through under a grant or a scope: the
    grant is checked by name, so swapping names gave `account`'s rights on `link`
    (40 link rows updated, no denial), and dropping a column changed rows outside the
    grant and of every scope."""
    box = mini().seed("a")
    guard = guard_for(box, identity)
    with pytest.raises(DatabaseError, match="not authorized"):
        for sql in statements:
            box.db.execute(sql)
    assert any("may not alter table" in d.reason for d in guard.take())  # type: ignore[attr-defined]
    assert box.dump().digest == box.initial.digest
    box.close()


def test_a_run_moves_to_the_idle_connection_that_holds_its_scope() -> None:
    """Fails if `hold_script` reinstalls the scope on the connection the run was seeded
    with although an idle one holds it (interleaved cells would pay the install every
    run), if `take` hands a script-holding connection to a run while the pool has room
    (the next scoped run would find its triggers dropped), if the connection left behind
    is not pooled again, or if the moved run's `db` or guard still use the one it left."""
    substrate = mini()
    org_a = Identity(role="agent", scope={"org": "ORG_A"})
    org_b = Identity(role="agent", scope={"org": "ORG_B"})
    a, b = substrate.seed("a"), substrate.seed("b")
    guard_for(a, org_a)
    guard_for(b, org_b)
    conn_a, conn_b = a.db.conn, b.db.conn
    a.close()
    b.close()
    run = substrate.seed("c")
    db, seeded = run.db, run.db.conn
    assert seeded not in (conn_a, conn_b)
    guard = guard_for(run, org_a)
    assert run.db is db and db.conn is conn_a
    with pytest.raises(DatabaseError):
        run.db.execute(OUT_OF_ORG_A)
    assert [d.key for d in guard.take()] == ['["ACC_001"]']  # type: ignore[attr-defined]
    assert run.db.execute(IN_ORG_A) == 1
    run.close()
    idle = dict(substrate._pool._idle)  # type: ignore[union-attr]
    assert set(idle) == {conn_a, conn_b, seeded} and idle[seeded] is None
    assert idle[conn_a] is not None and idle[conn_b] is not None and idle[conn_a] != idle[conn_b]
    plain = substrate.seed("d")
    assert plain.db.conn is seeded and temp_objects(plain) == 0
    plain.close()
    again = substrate.seed("e")
    guard_for(again, org_b)
    assert again.db.conn is conn_b
    assert again.db.execute(OUT_OF_ORG_A) == 1
    again.close()


@pytest.mark.usefixtures("one_idle")
def test_a_connection_whose_temp_schema_changed_beside_the_run_drops_its_script() -> None:
    """Fails if release kept a guard script whose temp schema changed outside the run's
    transaction: the next run with the same scope would reuse objects the script did not
    make. Tried: release comparing nothing (the stray table reached the second run)."""
    substrate = mini()
    identity = Identity(role="agent", scope={"org": "ORG_A"})
    first = substrate.seed("r1")
    guard_for(first, identity)
    conn = first.db.conn
    with _pool.gate_of(conn).trusted():
        conn.execute("CREATE TEMP TABLE stray (x)")  # beside the run: it commits at once
    assert first.db.execute(IN_ORG_A) == 1  # the run's own transaction, rolled back
    first.close()
    [(_, held)] = substrate._pool._idle  # type: ignore[union-attr]
    assert held is None  # pooled as a plain connection, its temp schema dropped
    second = substrate.seed("r2")
    assert second.db.conn is conn
    guard_for(second, identity)
    names = {row["name"] for row in second.db.query("SELECT name FROM temp.sqlite_master")}
    assert "stray" not in names and names  # the script ran again, and only it
    second.close()
