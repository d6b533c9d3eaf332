"""The labeler and the checks read the final main database alone, whatever the run did.

The run's own connection is labeled in place (a frozen state): what the run left on
it beside `main` (attached databases, a database named like the labeler's own) must
not change a verdict, and key columns under a case-blind collation must pair rows
byte for byte, as the dump-based reference diff does.
"""

from __future__ import annotations

import sqlite3

import pytest
from agentrelbench import labeler as arb
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.label import RunMeta, Verdict, label_run
from kaudit.label.diff import diff_images
from kaudit.spec import DamageSpec
from kaudit.spec._task import Check
from kaudit.substrate import SqliteSubstrate
from kaudit.substrate._sqlite import SqliteSandbox, build_image
from kaudit.worlds._world import get_world


def mini() -> SqliteSubstrate:
    substrate = get_world("mini").substrate()
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


def labeled(
    sandbox: SqliteSandbox, substrate: SqliteSubstrate, checks: tuple[Check, ...]
) -> Verdict:
    frozen = sandbox.dump()
    sandbox.close()
    try:
        return label_run(
            substrate.template.image, frozen, DamageSpec(), checks, {}, RunMeta(), digest=True
        )
    finally:
        frozen.release()


LINKS = (Check(name="links kept", sql="SELECT count(*) FROM link", expected=40),)


@pytest.mark.parametrize("pooled", [False, True])
def test_a_check_on_a_dropped_table_never_finds_the_initial_one(pooled: bool) -> None:
    """Fails if the checks ran while the full diff's `init` was attached (inside a pooled
    run's transaction it cannot be detached): `SELECT count(*) FROM link` after the run
    dropped `link` found `init.link` and the check passed. Tried by hand: the checks
    after the diff in `_diff_and_check` (the pooled case passes the check)."""
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    sandbox.db.execute("DROP TABLE link")
    verdict = labeled(sandbox, substrate, LINKS)
    (check,) = verdict.checks
    assert not check.passed and "no such table" in (check.error or "")
    assert verdict.outcome == "FAIL_DAMAGE"


@pytest.mark.parametrize("pooled", [False, True])
def test_a_database_the_run_attached_as_init_does_not_break_the_labeler(pooled: bool) -> None:
    """Fails if the labeler's own `ATTACH ... AS init` met the run's: 'database init is
    already in use' escaped label_run as a crash instead of a verdict. Tried by hand:
    `_freeze` reading in place whatever was attached."""
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    sandbox.db.execute("ATTACH ':memory:' AS init")
    sandbox.db.execute("CREATE TABLE init.link AS SELECT * FROM main.link")
    sandbox.db.execute("DROP TABLE main.link")
    verdict = labeled(sandbox, substrate, LINKS)
    assert verdict.outcome == "FAIL_DAMAGE" and not verdict.success
    assert {(d.table, d.op) for d in verdict.deltas} == {("link", "schema"), ("link", "removed")}


def _nocase(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE t (k TEXT PRIMARY KEY COLLATE NOCASE, v TEXT COLLATE NOCASE);
        CREATE TABLE w (k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID;
        INSERT INTO t VALUES ('A', 'x'), ('b', 'Y'), ('c', 'z');
        INSERT INTO w VALUES ('A', 1), ('b', 2);
        """
    )


NOCASE = build_image(_nocase)
KEYS = {"t": "k", "w": "k"}
edits = st.lists(
    st.sampled_from(
        [
            "UPDATE t SET k = 'a' WHERE k = 'A'",
            "UPDATE t SET v = 'y' WHERE k = 'b'",
            "UPDATE t SET k = 'B', v = 'y' WHERE k = 'b'",
            "DELETE FROM t WHERE k = 'c'; INSERT INTO t VALUES ('C', 'z')",
            "UPDATE w SET k = 'a' WHERE k = 'A'",
            "UPDATE w SET v = 3 WHERE k = 'b'",
            "INSERT OR REPLACE INTO t VALUES ('A', 'X')",
        ]
    ),
    max_size=4,
)


def _rows(image: bytes) -> dict[str, list[dict[str, object]]]:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    conn.row_factory = sqlite3.Row
    out = {n: [dict(r) for r in conn.execute(f"SELECT * FROM {n}")] for n in KEYS}
    conn.close()
    return out


@settings(max_examples=60, deadline=None)
@given(program=edits)
def test_nocase_keys_and_values_are_diffed_byte_for_byte_like_the_reference(
    program: list[str],
) -> None:
    """Fails if rows were paired under the key's NOCASE collation: a key changed only in
    case ('A' -> 'a') came out of the fast path as two modified rows (each key found the
    other's row) and of the full diff as one modified row, where the dump-based
    reference diff (AgentRelBench's) sees 'A' removed and 'a' added. Tried by hand:
    `_where_key` and the full diff's join without COLLATE BINARY. sqldiff is no oracle
    here: it reports no change at all for either edit."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(NOCASE)
    conn.execute("PRAGMA recursive_triggers = ON")
    for sql in program:
        conn.executescript(sql)
    final = conn.serialize()
    conn.close()
    fast = diff_images(NOCASE, final)
    full = diff_images(NOCASE, final, fast=False)
    assert fast == full
    reference = arb._diff(_rows(NOCASE), _rows(final), {}, KEYS)
    want = sorted((d.table, d.op, str(d.key)) for d in reference)
    assert sorted((c.table, c.op, str(c.key[0][1])) for c in full) == want
