"""The full diff's equality is exact although SQLite's comparison is not.

The full diff decides inside SQLite which rows differ and hands only those to Python,
so a pair SQLite calls equal is never looked at again: every way `IS` can call two
different typed values equal must be caught by the query itself. Each test names the
mutation of `kaudit.label._full_diff` it was seen to fail under.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from kaudit.label._full_diff import differing_rows
from kaudit.label._types import RowChange
from kaudit.label._values import Value
from kaudit.label.diff import ImagePair, diff_images
from kaudit.substrate import read_schema
from kaudit.substrate._sqlite import build_image


def image(script: str, rows: Callable[[sqlite3.Connection], None] | None = None) -> bytes:
    def builder(conn: sqlite3.Connection) -> None:
        conn.executescript(script)
        if rows is not None:
            rows(conn)

    return build_image(builder)


def changed(template: bytes, sql: str, *params: object, fast: bool = False) -> list[RowChange]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(template)
    conn.execute("PRAGMA recursive_triggers = ON")
    if params:
        conn.execute(sql, params)
    else:
        conn.executescript(sql)
    final = conn.serialize()
    conn.close()
    return diff_images(template, final, fast=fast)


def ten_thousand(first: Value) -> Callable[[sqlite3.Connection], None]:
    """10,000 rows of `t`; row 7 holds `first` in `v`, row i holds i elsewhere."""

    def rows(conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT INTO t VALUES (?, ?, ?)",
            ((i, first if i == 7 else i, f"n{i}") for i in range(10_000)),
        )

    return rows


TABLE = "CREATE TABLE t (id INTEGER PRIMARY KEY, v, name TEXT COLLATE NOCASE);"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (1, 1.0),
        (0, -0.0),
        (-1, -1.0),
        (2**52 - 1, float(2**52 - 1)),
        (-(2**52) + 1, float(-(2**52) + 1)),
        (2**52, float(2**52)),
        (-(2**52), float(-(2**52))),
        (2**53, float(2**53)),
        (-(2**63), float(-(2**63))),
    ],
)
def test_a_row_whose_only_change_is_integer_to_real_is_found_among_10k(
    old: int, new: float
) -> None:
    """Fails without the type flag `(a - a + 1) / 2`, or with a flag that loses the type at
    some magnitude (`(a*2+1)/2` rounds back to `a` from 2**52 on; `a / (a + a)` misses 0)."""
    template = image(TABLE, ten_thousand(old))
    for fast in (False, True):
        (change,) = changed(template, "UPDATE t SET v = ? WHERE id = 7", new, fast=fast)
        assert (change.op, change.key, change.changed) == ("modified", (("id", 7),), ("v",))
        assert change.before is not None and type(change.before["v"]) is int
        assert change.after is not None and type(change.after["v"]) is float


def rows_reaching_python(initial: bytes, final: bytes) -> list[object]:
    """What the full diff's queries hand to Python for table `t`: only rows that differ."""
    pair = ImagePair(initial, final)
    try:
        table = read_schema(pair.attach()).tables["t"]
        return list(differing_rows(pair.conn, table, frozenset()))
    finally:
        pair.close()


def test_values_rewritten_unchanged_never_leave_sqlite() -> None:
    """A real rewritten as the same real, a large integer as itself and NULL as NULL are
    no change, decided inside SQLite. Fails if the type flag differed between equal
    values (`/ 2.0` on one side: every integer row would reach Python, whose second
    comparison would drop it, so only this test sees the slowdown)."""
    script = (
        "UPDATE t SET v = v * 1.0 WHERE id = 8; UPDATE t SET v = v WHERE id = 7;"
        "UPDATE t SET v = NULL WHERE id = 9;"
    )
    template = image(TABLE, ten_thousand(2**60))
    start = image(TABLE, lambda conn: (ten_thousand(2**60)(conn), conn.executescript(script)))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(start)
    conn.executescript(script)
    assert rows_reaching_python(start, conn.serialize()) == []
    assert [c.key for c in changed(template, script)] == [(("id", 8),), (("id", 9),)]


@pytest.mark.parametrize(
    ("column", "old", "new"),
    [
        ("v", None, 0),
        ("v", 0, None),
        ("v", "", None),
        ("v", b"", ""),
        ("v", "ab", b"ab"),
        ("v", b"ab", "ab"),
        ("name", None, ""),
        ("name", "", None),
        ("name", b"", ""),
        ("name", "ab", b"ab"),
    ],
)
def test_null_empty_text_and_blob_are_told_apart(column: str, old: Value, new: Value) -> None:
    """Fails if values were compared with `=` (NULL against a value is unknown, not a
    change; `name` has TEXT affinity, so no other term catches it) or text and blob of
    the same bytes were compared by their bytes alone."""
    template = image(TABLE, ten_thousand(7))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(template)
    conn.execute(f"UPDATE t SET {column} = ? WHERE id = 7", (old,))
    start = conn.serialize()
    for fast in (False, True):
        (change,) = changed(start, f"UPDATE t SET {column} = ? WHERE id = 7", new, fast=fast)
        assert change.changed == (column,)
        assert change.after is not None and change.after[column] == new
        assert type(change.after[column]) is type(new)


def test_null_to_null_is_no_change() -> None:
    """Fails if NULL against NULL counted as a difference inside SQLite (`IS NOT` written
    as `!=` gives NULL there, which then hides NULL -> value changes instead)."""
    template = image(TABLE, ten_thousand(None))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(template)
    conn.execute("UPDATE t SET v = NULL WHERE id = 7")
    assert rows_reaching_python(template, conn.serialize()) == []
    assert len(changed(template, "UPDATE t SET v = NULL")) == 9_999


def test_a_case_change_in_a_nocase_column_is_a_change() -> None:
    """Fails if values were compared under the column's collation: `'n7' IS 'N7'` is true
    under NOCASE (the full diff missed this change before it compared COLLATE BINARY)."""
    template = image(TABLE, ten_thousand(7))
    for fast in (False, True):
        (change,) = changed(template, "UPDATE t SET name = 'N7' WHERE id = 7", fast=fast)
        assert change.changed == ("name",)


@pytest.mark.parametrize(
    ("initial", "final", "value", "stored"),
    [("INTEGER", "TEXT", 1, "1"), ("REAL", "INTEGER", 1.0, 1), ("TEXT", "BLOB", "1", 1)],
)
def test_a_column_re_declared_with_another_type_compares_storage_types(
    initial: str, final: str, value: Value, stored: Value
) -> None:
    """Fails if the exactness of a column were judged from one image's declared type:
    `1 IS '1'` is true when one side has INTEGER affinity and the other TEXT, and a REAL
    column's values were compared with a bare `IS`."""
    template = image(f"CREATE TABLE t (id INTEGER PRIMARY KEY, v {initial});")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(template)
    conn.execute("INSERT INTO t VALUES (1, ?)", (value,))
    start = conn.serialize()
    conn.executescript(f"DROP TABLE t; CREATE TABLE t (id INTEGER PRIMARY KEY, v {final});")
    conn.execute("INSERT INTO t VALUES (1, ?)", (stored,))
    final_image = conn.serialize()
    (change,) = diff_images(start, final_image, fast=False)
    assert change.changed == ("v",)
    assert change.before == {"id": 1, "v": value} and change.after == {"id": 1, "v": stored}


def test_null_keys_of_an_integer_primary_key_desc_are_keyed_by_rowid() -> None:
    """`INTEGER PRIMARY KEY DESC` is not the rowid and may hold NULL. Fails if the full
    diff took every one-column INTEGER key for the rowid (NULL-keyed rows unseen)."""
    template = image(
        "CREATE TABLE t (id INTEGER PRIMARY KEY DESC, v);"
        "INSERT INTO t VALUES (1, 'a'), (NULL, 'b'), (NULL, 'c');"
    )
    for fast in (False, True):
        (change,) = changed(template, "UPDATE t SET v = 'z' WHERE v = 'c'", fast=fast)
        assert (change.op, change.key, change.changed) == ("modified", (("rowid", 3),), ("v",))


def test_row_counts_do_not_hide_a_removal_where_keys_can_be_null() -> None:
    """One keyed row deleted and one NULL-keyed row added leave the row count unchanged.
    Fails if the count shortcut (skip the anti-join when counts prove nothing removed)
    were used for a table whose key can hold a NULL. The template carries no change
    capture: a kaudit-built one refuses the NULL key, an image made elsewhere need not."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE t (id TEXT PRIMARY KEY, v);INSERT INTO t VALUES ('a', 1), ('b', 2);"
    )
    template = conn.serialize()
    conn.close()
    changes = changed(template, "DELETE FROM t WHERE id = 'a'; INSERT INTO t VALUES (NULL, 3);")
    assert [(c.op, c.key) for c in changes] == [
        ("added", (("rowid", 3),)),
        ("removed", (("id", "a"),)),
    ]


def test_row_counts_do_not_hide_a_removal_when_the_key_is_re_declared() -> None:
    """With another key type, two final rows (1 and '1') pair with one initial row, so
    the counts balance although initial row 2 is gone. Fails if the count shortcut were
    used without both images declaring the table alike."""
    start = image(
        "CREATE TABLE t (k INT PRIMARY KEY, v) WITHOUT ROWID;"
        "INSERT INTO t VALUES (1, 'a'), (2, 'b');"
    )
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(start)
    conn.executescript(
        "DROP TABLE t; CREATE TABLE t (k PRIMARY KEY, v) WITHOUT ROWID;"
        "INSERT INTO t VALUES (1, 'a'), ('1', 'a');"
    )
    changes = diff_images(start, conn.serialize(), fast=False)
    assert [(c.op, c.key) for c in changes] == [
        ("modified", (("k", "1"),)),  # paired with 1: the key's type changed
        ("removed", (("k", 2),)),
    ]


@pytest.mark.parametrize("declared", ["REAL", "TEXT"])
def test_strict_real_and_text_columns_hold_no_integers(declared: str) -> None:
    """The type check is skipped for REAL and TEXT affinity on the ground that such a
    column never yields an integer; fails if a STRICT table stored one."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE t (c {declared}) STRICT")
    conn.execute("INSERT INTO t VALUES (1)")
    assert conn.execute("SELECT typeof(c) FROM t").fetchone()[0] == declared.lower()


def test_a_table_re_created_without_rowid_is_a_schema_change_in_the_full_diff() -> None:
    """The full diff reads both schemas from one connection. Fails if the initial
    table's WITHOUT ROWID flag were read from the final image (same shape, so its rows
    would be diffed instead of reporting the schema change)."""
    start = image("CREATE TABLE t (k TEXT PRIMARY KEY, v); INSERT INTO t VALUES ('a', 1);")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(start)
    conn.executescript(
        "DROP TABLE t; CREATE TABLE t (k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
        "INSERT INTO t VALUES ('a', 1);"
    )
    final = conn.serialize()
    for fast in (False, True):
        ops = [c.op for c in diff_images(start, final, fast=fast)]
        assert ops == ["added", "removed", "schema"]
