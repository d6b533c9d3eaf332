"""Statements are read as SQLite reads them: SQLite's own authorizer is the oracle."""

from __future__ import annotations

import sqlite3
from contextlib import suppress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.substrate._statement import read_statement


@pytest.mark.parametrize(
    ("sql", "kind", "pragma", "sets"),
    [
        ("/* ' */ PRAGMA foreign_keys = OFF /* ' */", "PRAGMA", "foreign_keys", True),
        ("-- it's\nPRAGMA main.recursive_triggers(0)", "PRAGMA", "recursive_triggers", True),
        ('PRAGMA "writable_schema" = 1', "PRAGMA", "writable_schema", True),
        ("explain query plan pragma [defer_foreign_keys]=on", "PRAGMA", "defer_foreign_keys", True),
        ("PRAGMA table_info('t')", "PRAGMA", "table_info", True),
        ("PRAGMA foreign_keys", "PRAGMA", "foreign_keys", False),
        ("SELECT '--', 1 /* PRAGMA x = 1 */", "SELECT", None, False),
        ("/* unterminated PRAGMA x = 1", "", None, False),
    ],
)
def test_a_statement_s_kind_and_pragma_ignore_comments_and_literals(
    sql: str, kind: str, pragma: str | None, sets: bool
) -> None:
    """Fails if literals were removed before comments (a quote inside a comment then
    swallowed the PRAGMA, as the old regex did), if EXPLAIN hid the PRAGMA behind it,
    or if a quoted or schema-qualified name was not read as the pragma's."""
    statement = read_statement(sql)
    assert (statement.kind, statement.pragma, statement.sets) == (kind, pragma, sets)


PRAGMAS = ["foreign_keys", "recursive_triggers", "writable_schema", "defer_foreign_keys"]
noise = st.sampled_from(
    [" ", "\n", "\t", "/* ' */", '/* " */', "-- '\n", "--\n", "/**/", "/* -- */", " \f "]
)


@st.composite
def statements(draw: st.DrawFn) -> str:
    """A PRAGMA or a SELECT, wrapped in comments, quotes, EXPLAIN and odd case."""
    gap = lambda: draw(st.lists(noise, max_size=2).map("".join)) or " "  # noqa: E731
    name = draw(st.sampled_from(PRAGMAS))
    name = draw(st.sampled_from([name, name.upper(), f'"{name}"', f"[{name}]", f"`{name}`"]))
    schema = draw(st.sampled_from(["", "main.", "temp.", '"main".']))
    value = draw(st.sampled_from(["", " = 0", "=ON", "(1)", " = 'x'"]))
    explain = draw(st.sampled_from(["", "EXPLAIN", "explain QUERY plan"]))
    word = draw(st.sampled_from(["PRAGMA", "pragma", "Pragma", "SELECT 1 --", "SELECT '", "/*"]))
    body = f"{word}{gap()}{schema}{name}{value}"
    return f"{gap()}{explain}{gap() if explain else ''}{body}{gap()}"


def authorized_pragma(sql: str) -> tuple[str, bool] | None:
    """The PRAGMA SQLite's compiler asks to run for `sql` (name, with a value?), or None."""
    pragmas = [(a1, a2) for action, a1, a2 in asked(sql) if action == sqlite3.SQLITE_PRAGMA]
    return ((pragmas[0][0] or "").lower(), pragmas[0][1] is not None) if pragmas else None


@settings(max_examples=300, deadline=None)
@given(sql=statements())
def test_every_pragma_sqlite_compiles_is_read_as_that_pragma(sql: str) -> None:
    """Fails if some spelling (comments holding quotes, EXPLAIN, a quoted or qualified
    name, odd case or whitespace) makes SQLite compile a PRAGMA that the sandbox's
    reading misses or misnames: the pooled run would then not leave the pool or not
    refuse it. Tried by hand: the old regex (literals stripped before comments) and a
    reading that does not look through EXPLAIN both fail here."""
    found = authorized_pragma(sql)
    statement = read_statement(sql)
    if found is not None:
        assert statement.kind == "PRAGMA"
        assert (statement.pragma, statement.sets) == found


_TEMP_CREATES = {
    sqlite3.SQLITE_CREATE_TEMP_TABLE,
    sqlite3.SQLITE_CREATE_TEMP_VIEW,
    sqlite3.SQLITE_CREATE_VTABLE,
}


@st.composite
def attaches_and_creates(draw: st.DrawFn) -> str:
    """An ATTACH or a statement making a temporary table or view, in odd spellings."""
    gap = lambda: draw(st.lists(noise, max_size=2).map("".join)) or " "  # noqa: E731
    body = draw(
        st.sampled_from(
            [
                "ATTACH ':memory:' AS x",
                "attach database ':memory:' as \"x\"",
                "CREATE TEMP TABLE t (a)",
                "create temporary view v as select 1",
                "CREATE TABLE temp.t (a)",
                'CREATE TABLE "temp".t (a)',
                "CREATE VIEW temp.v AS SELECT 1",
                "CREATE VIRTUAL TABLE temp.r USING rtree(id, a, b)",
                "SELECT 'ATTACH'",
            ]
        )
    )
    explain = draw(st.sampled_from(["", "EXPLAIN", "EXPLAIN QUERY PLAN"]))
    return f"{gap()}{explain}{gap() if explain else ''}{body}{gap()}"


def asked(sql: str) -> list[tuple[int, str | None, str | None]]:
    """What SQLite's compiler asks the authorizer for `sql`: (action, arg1, arg2), in order.

    Every request is denied, so nothing runs: PRAGMAs are asked before they act.
    """
    conn = sqlite3.connect(":memory:")
    seen: list[tuple[int, str | None, str | None]] = []

    def note(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
        seen.append((action, arg1, arg2))
        return sqlite3.SQLITE_DENY

    conn.set_authorizer(note)
    try:
        conn.execute(sql)
    except sqlite3.Error:
        pass
    finally:
        conn.close()
    return seen


def authorized_actions(sql: str) -> set[int]:
    """The actions SQLite's compiler asks about for `sql`, nothing run."""
    return {action for action, _, _ in asked(sql)}


@settings(max_examples=200, deadline=None)
@given(sql=attaches_and_creates())
def test_every_attach_and_temporary_object_is_read_as_such(sql: str) -> None:
    """Fails if SQLite compiles an ATTACH the sandbox does not read as one (the frozen
    state would then be read in place, the attached database beside it), or makes a
    temporary table or view from a statement not read as CREATE (it would then not be
    dropped before the checks); or if a statement read as EXPLAIN (which the sandbox
    lets pass) did attach or create something when run."""
    actions = authorized_actions(sql)
    statement = read_statement(sql)
    if sqlite3.SQLITE_ATTACH in actions:
        assert statement.kind == "ATTACH"
    if actions & _TEMP_CREATES or sqlite3.SQLITE_CREATE_TABLE in actions:
        assert statement.kind == "CREATE"
    if statement.explained:
        conn = sqlite3.connect(":memory:")
        with suppress(sqlite3.Error):
            conn.execute(sql).fetchall()
        assert len(conn.execute("PRAGMA database_list").fetchall()) == 1
        assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)
        conn.close()
