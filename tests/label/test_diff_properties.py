"""Property tests: SQLite itself is the oracle for what changed."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.label.diff import diff_images
from kaudit.substrate._sqlite import build_image
from tests.label.conftest import Mutate

values = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.text("ab1", max_size=2),
    st.binary(max_size=2),
)
ids = st.integers(0, 40)
teams = st.sampled_from(["T0", "T1", "T2", "T9"])
people = st.sampled_from([f"P{i}" for i in range(6)])

statements = st.one_of(
    st.tuples(st.just("UPDATE item SET qty = ? WHERE id = ?"), st.tuples(values, ids)),
    st.tuples(st.just("UPDATE item SET name = ? WHERE id = ?"), st.tuples(values, ids)),
    st.tuples(st.just("DELETE FROM item WHERE id = ?"), st.tuples(ids)),
    st.tuples(
        st.just("INSERT OR REPLACE INTO item (id, qty) VALUES (?, ?)"), st.tuples(ids, values)
    ),
    st.tuples(
        st.just("INSERT OR REPLACE INTO member VALUES (?, ?, ?)"), st.tuples(teams, people, values)
    ),
    st.tuples(st.just("DELETE FROM member WHERE team = ?"), st.tuples(teams)),
    st.tuples(st.just("UPDATE plain SET b = ? WHERE a = ?"), st.tuples(values, ids)),
    st.tuples(st.just("INSERT INTO plain VALUES (?, ?)"), st.tuples(values, values)),
)


def run(image: bytes, program: list[tuple[str, tuple[object, ...]]]) -> bytes:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(image)
    conn.execute("PRAGMA recursive_triggers = ON")
    for sql, params in program:
        conn.execute(sql, params)
    out = conn.serialize()
    conn.close()
    return out


@settings(max_examples=150, deadline=None)
@given(program=st.lists(statements, max_size=12))
def test_fast_path_equals_full_diff_under_random_mutations(
    template: bytes, program: list[tuple[str, tuple[object, ...]]]
) -> None:
    final = run(template, program)
    assert diff_images(template, final) == diff_images(template, final, fast=False)


@settings(max_examples=80, deadline=None)
@given(program=st.lists(statements, min_size=1, max_size=8))
def test_every_mutation_shows_up_in_the_diff(
    template: bytes, program: list[tuple[str, tuple[object, ...]]]
) -> None:
    final = run(template, program)
    changed_tables = {c.table for c in diff_images(template, final)}
    conn = sqlite3.connect(":memory:")
    conn.deserialize(template)
    conn.execute("ATTACH ':memory:' AS fin")
    conn.deserialize(final, name="fin")
    for table in ("item", "member", "plain"):
        only_before = f"SELECT * FROM main.{table} EXCEPT SELECT * FROM fin.{table}"
        only_after = f"SELECT * FROM fin.{table} EXCEPT SELECT * FROM main.{table}"
        differs = conn.execute(
            f"SELECT (SELECT COUNT(*) FROM ({only_before})) + (SELECT COUNT(*) FROM ({only_after}))"
        ).fetchone()[0]
        if differs:
            assert table in changed_tables


@settings(max_examples=60, deadline=None)
@given(program=st.lists(statements, max_size=10))
def test_diff_is_deterministic(
    template: bytes, program: list[tuple[str, tuple[object, ...]]]
) -> None:
    final = run(template, program)
    assert diff_images(template, final) == diff_images(template, final)


@settings(max_examples=25, deadline=None)
@given(
    order=st.permutations(list(range(12))),
    table_order=st.permutations(["a", "b"]),
    touched=st.sets(st.integers(0, 11), max_size=4),
)
def test_row_and_table_order_do_not_change_the_diff(
    order: list[int], table_order: list[str], touched: set[int]
) -> None:
    def build(row_order: list[int], tables: list[str]) -> bytes:
        def builder(conn: sqlite3.Connection) -> None:
            for name in tables:
                conn.execute(f"CREATE TABLE {name} (k INTEGER, j TEXT, v, PRIMARY KEY (k, j))")
            for i in row_order:
                for name in tables:
                    conn.execute(f"INSERT INTO {name} VALUES (?, 'x', ?)", (i, i * 1.5))

        return build_image(builder)

    mutation = "".join(
        f"UPDATE a SET v = 'changed' WHERE k = {i}; DELETE FROM b WHERE k = {i};"
        for i in sorted(touched)
    )
    diffs = []
    for rows, tables in ((list(range(12)), ["a", "b"]), (order, table_order)):
        image = build(rows, tables)
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.deserialize(image)
        conn.executescript(mutation)
        diffs.append(diff_images(image, conn.serialize()))
    assert diffs[0] == diffs[1]
    assert len(diffs[0]) == 2 * len(touched)


def test_mutate_fixture_round_trips(template: bytes, mutate: Mutate) -> None:
    assert diff_images(template, mutate(template, "")) == []
