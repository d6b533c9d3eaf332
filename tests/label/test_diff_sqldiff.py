"""The full diff agrees with `sqldiff --primarykey` on random tables in real SQLite files.

sqldiff (SQLite's own tool, Debian package `sqlite3-tools`) is the oracle for which rows
changed. Its SQL output is parsed by SQLite itself: the patch is replayed on a copy of
the initial file under temporary triggers that record each statement's table, kind and
key. The two lists must be equal, but for one documented difference: sqldiff compares
values with `IS`, so a value whose only change is integer to real of the same number
(1 -> 1.0) is no change to it and a change to kaudit.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.label._types import RowChange
from kaudit.label._values import Value
from kaudit.label.diff import diff_images

SCHEMA = """
CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL, v);
CREATE TABLE member (team TEXT NOT NULL, n INTEGER NOT NULL, role, PRIMARY KEY (team, n));
CREATE TABLE word (w TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE plain (a, b);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8)
INSERT INTO item SELECT i, 'n' || i, i, i * 0.5, i FROM n;
INSERT INTO member VALUES ('x', 0, 'a'), ('x', 1, 'b'), ('y', 2, 'c');
INSERT INTO word VALUES ('a', 1), ('it''s', 2);
INSERT INTO plain VALUES (1, 'p'), (2, 'q'), (3, 'r');
"""
KEYS = {"item": ("id",), "member": ("team", "n"), "word": ("w",), "plain": ("rowid",)}
KINDS = {"INSERT": "added", "DELETE": "removed", "UPDATE": "modified"}

values = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, -0.0, 2.0, 0.1 + 0.2, 2**53, float(2**53)]),
    st.text("a'\nb", max_size=3),
    st.binary(max_size=2),
)
ids = st.integers(1, 12)
teams = st.sampled_from(["x", "y"])
ns = st.integers(0, 3)
words = st.sampled_from(["a", "b", "it's", "c\nd"])
statements = st.one_of(
    st.tuples(
        st.just("INSERT OR REPLACE INTO item VALUES (?, ?, ?, ?, ?)"),
        st.tuples(ids, values, values, values, values),
    ),
    st.tuples(st.just("UPDATE item SET v = ? WHERE id = ?"), st.tuples(values, ids)),
    st.tuples(st.just("UPDATE item SET name = ? WHERE id = ?"), st.tuples(values, ids)),
    st.tuples(
        st.just("UPDATE item SET qty = ?, price = ? WHERE id = ?"), st.tuples(values, values, ids)
    ),
    st.tuples(st.just("UPDATE OR REPLACE item SET id = ? WHERE id = ?"), st.tuples(ids, ids)),
    st.tuples(st.just("DELETE FROM item WHERE id = ?"), st.tuples(ids)),
    st.tuples(
        st.just("INSERT OR REPLACE INTO member VALUES (?, ?, ?)"), st.tuples(teams, ns, values)
    ),
    st.tuples(st.just("UPDATE OR REPLACE member SET n = ? WHERE n = ?"), st.tuples(ns, ns)),
    st.tuples(st.just("DELETE FROM member WHERE team = ? AND n = ?"), st.tuples(teams, ns)),
    st.tuples(st.just("INSERT OR REPLACE INTO word VALUES (?, ?)"), st.tuples(words, values)),
    st.tuples(st.just("DELETE FROM word WHERE w = ?"), st.tuples(words)),
    st.tuples(st.just("INSERT INTO plain VALUES (?, ?)"), st.tuples(values, values)),
    st.tuples(st.just("UPDATE plain SET b = ? WHERE rowid = ?"), st.tuples(values, ids)),
    st.tuples(st.just("DELETE FROM plain WHERE rowid = ?"), st.tuples(ids)),
)
programs = st.lists(statements, max_size=10)

Entry = tuple[str, str, tuple[tuple[str, Value], ...]]


def scratch(path: Path) -> sqlite3.Connection:
    """A connection to a throwaway file that never waits for the disk."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA journal_mode = MEMORY")
    return conn


def apply(path: Path, program: list[tuple[str, tuple[object, ...]]]) -> None:
    conn = scratch(path)
    for sql, params in program:
        conn.execute(sql, params)
    conn.close()


def sqldiff_changes(before: Path, after: Path, replay: Path) -> list[Entry]:
    """sqldiff's changes, replayed on a copy of `before` under recording triggers."""
    sqldiff = shutil.which("sqldiff")
    assert sqldiff is not None, "sqldiff is missing: apt-get install -y sqlite3-tools"
    patch = subprocess.run(
        [sqldiff, "--primarykey", str(before), str(after)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    shutil.copyfile(before, replay)
    conn = scratch(replay)
    conn.execute("CREATE TEMP TABLE seen (tbl, kind, k0, k1)")
    for table, key in KEYS.items():
        for kind, row in (("INSERT", "NEW"), ("DELETE", "OLD"), ("UPDATE", "OLD")):
            parts = [f"{row}.{c}" for c in key] + ["NULL"] * (2 - len(key))
            conn.execute(
                f"CREATE TEMP TRIGGER seen_{table}_{kind} AFTER {kind} ON main.{table} "
                f"BEGIN INSERT INTO seen VALUES ('{table}', '{kind}', {', '.join(parts)}); END"
            )
    conn.executescript(patch)
    found = [
        (table, KINDS[kind], tuple(zip(KEYS[table], (k0, k1), strict=False)))
        for table, kind, k0, k1 in conn.execute("SELECT * FROM seen").fetchall()
    ]
    conn.close()
    return sorted(found, key=repr)


def same_number_only(change: RowChange) -> bool:
    """A modification sqldiff cannot see: each changed column keeps its number, only
    its storage type changes between integer and real."""
    if change.op != "modified" or change.before is None or change.after is None:
        return False
    pairs = [(change.before[c], change.after[c]) for c in change.changed]
    return all(
        isinstance(a, int | float) and isinstance(b, int | float) and a == b for a, b in pairs
    )


@settings(max_examples=120, deadline=None)
@given(seed=programs, program=programs)
def test_full_diff_lists_the_rows_sqldiff_lists(
    seed: list[tuple[str, tuple[object, ...]]], program: list[tuple[str, tuple[object, ...]]]
) -> None:
    """Fails if the full diff loses or invents a changed row on any table shape
    (INTEGER PRIMARY KEY, composite key, WITHOUT ROWID, rowid-keyed), e.g. the anti-join
    skipped on a wrong row count, added rows taken for modified ones, or a key update
    shown as a modification."""
    with tempfile.TemporaryDirectory() as tmp:
        before, after = Path(tmp) / "before.sqlite", Path(tmp) / "after.sqlite"
        conn = scratch(before)
        conn.executescript(SCHEMA)
        conn.close()
        apply(before, seed)
        shutil.copyfile(before, after)
        apply(after, program)
        changes = diff_images(before.read_bytes(), after.read_bytes(), fast=False)
        expected = sqldiff_changes(before, after, Path(tmp) / "replay.sqlite")
    assert all(c.op != "schema" for c in changes)
    listed = sorted(((c.table, c.op, c.key) for c in changes if not same_number_only(c)), key=repr)
    assert listed == expected
