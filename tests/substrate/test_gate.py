"""The statement gate: SQLite's authorizer, installed once per connection, judges tool SQL."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.errors import SubstrateError
from kaudit.label.checks import CheckDeniedError, run_checks
from kaudit.spec._task import Check
from kaudit.substrate import SqliteSubstrate
from kaudit.substrate._gate import gate_of
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.worlds._world import get_world

UPDATE = "UPDATE account SET status = 'closed' WHERE id = 'ACC_001'"


def mini() -> SqliteSubstrate:
    substrate = get_world("mini").substrate()
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


REFUSED = ["writable_schema", "schema_version", "hard_heap_limit", "soft_heap_limit", "threads"]
noise = st.sampled_from([" ", "\n", "\t", "/* ' */", '/* " */', "-- '\n", "--\n", "/**/"])


@st.composite
def refused_pragmas(draw: st.DrawFn) -> tuple[str, str]:
    """A PRAGMA no sandbox may set, wrapped in comments, quotes, EXPLAIN and odd case."""
    gap = lambda: draw(st.lists(noise, max_size=2).map("".join)) or " "  # noqa: E731
    name = draw(st.sampled_from(REFUSED))
    spelled = draw(st.sampled_from([name, name.upper(), f'"{name}"', f"[{name}]", f"`{name}`"]))
    schema = draw(st.sampled_from(["", "main.", '"main".']))
    value = draw(st.sampled_from([" = 1", "=ON", "(1)", " = '7'"]))
    explain = draw(st.sampled_from(["", "EXPLAIN ", "explain QUERY plan "]))
    word = draw(st.sampled_from(["PRAGMA", "pragma", "Pragma"]))
    lead = draw(st.sampled_from(["", ";", "; ", "/* x */;"]))
    return f"{lead}{gap()}{explain}{word}{gap()}{schema}{spelled}{value}{gap()}", name


@settings(max_examples=150, deadline=None)
@given(case=refused_pragmas(), pooled=st.booleans())
def test_every_spelling_of_a_refused_pragma_makes_the_run_invalid(
    case: tuple[str, str], pooled: bool
) -> None:
    """Fails if some spelling (a leading `;`, comments holding quotes, EXPLAIN, a quoted
    or schema-qualified name, odd case) runs a PRAGMA no sandbox may set. Tried by hand:
    a gate that matches the name case-sensitively, or one that ignores EXPLAIN (SQLite
    applies a PRAGMA while compiling it) both fail here."""
    sql, name = case
    substrate = mini()
    box = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    try:
        with pytest.raises(SubstrateError, match=name):
            box.db.execute(sql)
    except sqlite3.Warning:
        pass  # two statements in one string: sqlite3 runs neither
    box.close()


def test_a_pooled_connection_compiles_a_repeated_statement_once_per_identity() -> None:
    """Fails if the gate were installed again per run (each `set_authorizer` expires the
    statement cache: the second run would compile the UPDATE again, asking the grant),
    or if a run under another grant reused what was compiled under the first (the new
    grant would never be asked about the UPDATE). Tried by hand: `arm` re-installing
    the authorizer every time."""
    substrate = mini()
    asked: list[int] = []

    def grant(action: int, *_: object) -> int:
        asked.append(action)
        return sqlite3.SQLITE_OK

    counts = []
    for key in ("role a", "role a", "role b"):
        box = substrate.seed("r")
        gate_of(box.db.conn).arm(box.db.conn, grant, key)
        asked.clear()
        box.db.execute(UPDATE)
        counts.append(len(asked))
        box.close()
    assert counts[0] > 0 and counts[1] == 0 and counts[2] == counts[0]


@pytest.mark.parametrize("pooled", [True, False])
def test_a_tool_cannot_run_a_statement_kaudit_compiled_for_itself(pooled: bool) -> None:
    """Fails if tool SQL shared the statement cache with atomic()'s own savepoints: the
    tool's `RELEASE kaudit_0` would reuse the statement atomic() compiled (allowed for
    it) without the gate being asked, and release the block behind its back. Tried by
    hand: tool SQL run without the `TOOL_SQL` prefix."""
    substrate = mini()
    box = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    with box.db.atomic():
        box.db.execute(UPDATE)
    with pytest.raises(SubstrateError, match="savepoint of atomic"), box.db.atomic():
        box.db.execute("RELEASE kaudit_0")
    box.close()


def test_a_check_cannot_reuse_the_rollback_an_earlier_release_compiled() -> None:
    """Fails if a check's SQL shared the statement cache with kaudit's own statements:
    the ROLLBACK the previous run's release compiled on this pooled connection would run
    unasked and undo the run's writes before the labeler reads them (damage labeled
    clean). Tried by hand: `run_check` without the `CHECK_SQL` prefix."""
    substrate = mini()
    first = substrate.seed("r1")
    first.db.execute(UPDATE)
    first.close()  # release: ROLLBACK compiled on the connection, for kaudit itself
    second = substrate.seed("r2")
    assert second.db.conn is first.db.conn
    second.db.execute(UPDATE)
    frozen = second.dump()
    check = Check(name="undo", sql="ROLLBACK", expected=1)
    with pytest.raises(CheckDeniedError, match="TRANSACTION"):
        run_checks(frozen, (check,), {})
    with frozen.reading() as conn:
        row = conn.execute("SELECT status FROM account WHERE id = 'ACC_001'").fetchone()
    assert row == ("closed",)
    second.close()
    frozen.release()


@pytest.mark.parametrize("pooled", [True, False])
def test_dropping_a_table_drops_its_capture_triggers_but_sql_cannot_drop_one(
    pooled: bool,
) -> None:
    """Fails if the gate refused the capture triggers SQLite drops with their table (a
    run's DROP TABLE, which the labeler reports as damage, would become INVALID), or
    let a statement drop one of them on its own (the table's writes would go unlogged)."""
    substrate = mini()
    box = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    box.db.execute("DROP TABLE outbox")
    with pytest.raises(SubstrateError, match="_kaudit_upd_account"):
        box.db.execute("DROP TRIGGER _kaudit_upd_account")
    box.close()
