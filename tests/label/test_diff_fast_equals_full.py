"""The fast diff (change log) equals the full diff on every trap the log could fall into.

Each example below was a reproduced departure; the property test then draws random
programs over every statement kind together. Mutations of the capture that these tests
catch (each tried by hand): a trigger that logs only the new key on UPDATE; keys logged
as JSON text (15 significant digits); a log trusted after a table lost its triggers; a
log trusted after a write without `recursive_triggers`; NULL keys matched with `IS`.
The fast path compares in Python, so it is also the oracle for the full diff's SQL
equality: values compared under the NOCASE collation, or an integer against a real of the
same number taken as equal, make the two paths differ.
"""

from __future__ import annotations

import contextlib
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.label import RunMeta, label_run
from kaudit.label.diff import diff_images
from kaudit.spec import DamageSpec
from kaudit.substrate._sqlite import build_image

FLOATS = (0.1, 0.2, 0.1 + 0.2, 0.3, 1e-300, 2.5)


def build(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, qty);
        CREATE TABLE fk (k REAL PRIMARY KEY, v);
        CREATE TABLE wr (a TEXT, b INTEGER, v, PRIMARY KEY (a, b)) WITHOUT ROWID;
        CREATE TABLE uq (id TEXT PRIMARY KEY, email TEXT UNIQUE, v);
        CREATE TABLE plain (a, b);
        """
    )
    for i in range(6):
        conn.execute("INSERT INTO item VALUES (?, ?, ?)", (i, f"n{i}", i))
        conn.execute("INSERT INTO wr VALUES (?, ?, ?)", (f"a{i % 2}", i, i))
        conn.execute("INSERT INTO uq VALUES (?, ?, ?)", (f"u{i}", f"e{i}", i))
        conn.execute("INSERT INTO plain VALUES (?, ?)", (i, i))
    for i, k in enumerate(FLOATS[:4]):
        conn.execute("INSERT INTO fk VALUES (?, ?)", (k, i))
    conn.execute("INSERT INTO uq VALUES (NULL, 'n1', 10), (NULL, 'n2', 11)")
    conn.execute("UPDATE item SET qty = ? WHERE id = 5", (2**53,))  # beyond doubles' exact integers


TEMPLATE = build_image(build)


def run(program: list[tuple[str, tuple[object, ...]]], recursive: bool = True) -> bytes:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(TEMPLATE)
    conn.execute(f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'}")
    for sql, params in program:
        # A constraint violation leaves the state as it was, as in a real tool.
        with contextlib.suppress(sqlite3.Error):
            conn.execute(sql, params)
    out = conn.serialize()
    conn.close()
    return out


def both(final: bytes) -> tuple[list[object], list[object]]:
    return diff_images(TEMPLATE, final), diff_images(TEMPLATE, final, fast=False)


def test_a_real_key_one_ulp_away_is_found() -> None:
    """Fails if keys are logged as text with 15 significant digits (0.1+0.2 -> 0.3)."""
    fast, full = both(run([("UPDATE fk SET v = 'x' WHERE k = ?", (0.1 + 0.2,))]))
    assert fast == full and len(full) == 1


def test_a_primary_key_update_is_a_removal_and_an_addition() -> None:
    """Fails if the UPDATE trigger logged only the new key."""
    fast, full = both(run([("UPDATE item SET id = 40 WHERE id = 2", ())]))
    assert fast == full
    assert [(c.op, c.key) for c in full] == [("added", (("id", 40),)), ("removed", (("id", 2),))]  # type: ignore[attr-defined]


def test_a_re_created_table_falls_back_to_the_full_diff_and_says_so() -> None:
    """Fails if the log were trusted after `plain` lost its triggers (the insert is missed)."""
    final = run(
        [
            ("DROP TABLE plain", ()),
            ("CREATE TABLE plain (a, b)", ()),
            ("INSERT INTO plain VALUES (9, 9)", ()),
        ]
    )
    fast, full = both(final)
    assert fast == full and len(full) == 6  # same shape: rowid 1 rewritten, 2-6 removed
    verdict = label_run(TEMPLATE, final, DamageSpec(), (), {}, RunMeta())
    assert "full_diff_fallback" in verdict.flags
    assert verdict.diff_fallback is not None and "triggers" in verdict.diff_fallback


def test_a_capture_trigger_dropped_and_re_created_falls_back_to_the_full_diff() -> None:
    """Fails if equal triggers at the end were taken to mean an intact log: the update
    made while `item`'s UPDATE trigger was gone, re-created with the very same text,
    is in no log entry, and the fast path reported no change. Tried by hand: the old
    cookie-then-fingerprint test in `_touched_keys`."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(TEMPLATE)
    (trigger,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%upd_item'"
    ).fetchone()
    conn.close()
    final = run(
        [
            ("DROP TRIGGER _kaudit_upd_item", ()),
            ("UPDATE item SET qty = 99 WHERE id = 3", ()),
            (trigger, ()),
        ]
    )
    fast, full = both(final)
    assert fast == full and len(full) == 1
    verdict = label_run(TEMPLATE, final, DamageSpec(), (), {}, RunMeta())
    assert verdict.diff_fallback is not None and "DDL" in verdict.diff_fallback


def test_a_final_image_without_the_log_falls_back_at_an_equal_schema_cookie() -> None:
    """A PostgreSQL full dump is a fresh SQLite image with the world's tables only, its
    schema cookie the count of what it created. Fails if equal cookies were taken to mean
    the final state still holds the template's change log: with as many extra tables as
    make the cookies equal, the labeler queried a log that is not there and raised
    `no such table` (a damaging run became INVALID). Tried by hand with the log looked for
    only after the cookie moved."""

    def world(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE acct (id TEXT PRIMARY KEY, bal INTEGER)")
        conn.execute("INSERT INTO acct VALUES ('a', 1), ('b', 2)")

    initial = build_image(world)
    template = sqlite3.connect(":memory:")
    template.deserialize(initial)
    cookie = template.execute("PRAGMA schema_version").fetchone()[0]
    final = sqlite3.connect(":memory:")
    final.execute("CREATE TABLE acct (id TEXT PRIMARY KEY, bal INTEGER)")
    final.execute("INSERT INTO acct VALUES ('a', 1), ('b', 999)")
    for i in range(cookie - 1):
        final.execute(f"CREATE TABLE extra{i} (x)")
    final.commit()
    assert final.execute("PRAGMA schema_version").fetchone()[0] == cookie
    image = final.serialize()
    fast, full = diff_images(initial, image), diff_images(initial, image, fast=False)
    assert fast == full
    assert ("acct", "modified") in {(c.table, c.op) for c in fast}


def test_rows_with_a_null_text_key_are_keyed_by_rowid_in_both_paths() -> None:
    """Fails if NULL keys were joined with `IS` (full path pairs both NULL rows) or looked
    up by key in the fast path (which then finds the wrong NULL row)."""
    fast, full = both(run([("DELETE FROM uq WHERE email = 'n2'", ())]))
    assert fast == full
    (change,) = full
    assert change.op == "removed" and change.key == (("rowid", 8),)  # type: ignore[attr-defined]
    assert change.before["email"] == "n2"  # type: ignore[attr-defined]


def test_replace_through_a_unique_column_without_recursive_triggers() -> None:
    """Fails if the log were trusted although the REPLACE's delete fired no trigger."""
    final = run([("INSERT OR REPLACE INTO uq VALUES ('new', 'e1', 0)", ())], recursive=False)
    fast, full = both(final)
    assert fast == full
    assert sorted(c.op for c in full) == ["added", "removed"]  # type: ignore[attr-defined]


ids = st.integers(0, 8)
texts = st.sampled_from(["u0", "u1", "u7", "new", None])
emails = st.sampled_from(["e0", "e1", "e2", "n1", "n2", "zz"])
floats = st.sampled_from(FLOATS)
values = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.text("ab", max_size=2),
    # Equal to SQLite's `IS`, not to the diff: integer vs real, text vs blob.
    st.sampled_from([1.0, -0.0, 2**52, float(2**52), 2**53, float(2**53), b"a", b"ab"]),
)
statements = st.one_of(
    st.tuples(st.just("UPDATE item SET id = ? WHERE id = ?"), st.tuples(ids, ids)),
    st.tuples(st.just("UPDATE OR REPLACE item SET id = ? WHERE id = ?"), st.tuples(ids, ids)),
    st.tuples(st.just("UPDATE item SET qty = ? WHERE id = ?"), st.tuples(values, ids)),
    # Changes SQLite's `IS` does not see: case under NOCASE, integer to the same real.
    st.tuples(st.just("UPDATE item SET name = upper(name) WHERE id = ?"), st.tuples(ids)),
    st.tuples(st.just("UPDATE item SET qty = qty * 1.0 WHERE id = ?"), st.tuples(ids)),
    st.tuples(
        st.just("INSERT OR REPLACE INTO item (id, qty) VALUES (?, ?)"), st.tuples(ids, values)
    ),
    st.tuples(st.just("DELETE FROM item WHERE id = ?"), st.tuples(ids)),
    st.tuples(st.just("INSERT OR REPLACE INTO fk VALUES (?, ?)"), st.tuples(floats, values)),
    st.tuples(st.just("UPDATE fk SET k = ? WHERE k = ?"), st.tuples(floats, floats)),
    st.tuples(st.just("UPDATE fk SET v = ? WHERE k = ?"), st.tuples(values, floats)),
    st.tuples(st.just("DELETE FROM fk WHERE k = ?"), st.tuples(floats)),
    st.tuples(
        st.just("INSERT OR REPLACE INTO wr VALUES (?, ?, ?)"),
        st.tuples(st.sampled_from(["a0", "a1", "a2"]), ids, values),
    ),
    st.tuples(st.just("UPDATE wr SET b = ? WHERE b = ?"), st.tuples(ids, ids)),
    st.tuples(st.just("DELETE FROM wr WHERE a = ?"), st.tuples(st.sampled_from(["a0", "a1"]))),
    st.tuples(
        st.just("INSERT OR REPLACE INTO uq VALUES (?, ?, ?)"), st.tuples(texts, emails, values)
    ),
    st.tuples(st.just("UPDATE uq SET id = ? WHERE email = ?"), st.tuples(texts, emails)),
    st.tuples(st.just("UPDATE uq SET v = ? WHERE id IS NULL"), st.tuples(values)),
    st.tuples(st.just("DELETE FROM uq WHERE email = ?"), st.tuples(emails)),
    st.tuples(st.just("INSERT INTO plain VALUES (?, ?)"), st.tuples(values, values)),
    st.tuples(st.just("UPDATE plain SET b = ? WHERE a = ?"), st.tuples(values, ids)),
    st.sampled_from(
        [
            ("DROP TABLE plain", ()),
            ("CREATE TABLE IF NOT EXISTS plain (a, b)", ()),
            ("CREATE TABLE extra (x)", ()),
            ("ALTER TABLE item ADD COLUMN z", ()),
            ("DROP TABLE wr", ()),
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(program=st.lists(statements, max_size=12), recursive=st.booleans())
def test_fast_path_equals_full_diff_under_every_kind_of_statement(
    program: list[tuple[str, tuple[object, ...]]], recursive: bool
) -> None:
    """Fails under each capture mutation listed in the module docstring."""
    fast, full = both(run(program, recursive))
    assert fast == full
