"""What the wire proxy reads from a client's SQL: statements, commits, writes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kaudit.postgres._statements import (
    is_begin,
    is_commit,
    is_rollback,
    may_write,
    split_statements,
)


def test_split_skips_semicolons_in_strings_identifiers_comments_and_dollar_quotes() -> None:
    """Fails if a `;` inside quoted text or a comment is taken for a statement's end."""
    text = (
        "INSERT INTO t VALUES ('a;b', 'it''s;'); -- x; y\n"
        'SELECT "we;ird" FROM t /* c; d */; '
        "DO $fn$ BEGIN PERFORM 1; END $fn$;; COMMIT"
    )
    assert split_statements(text) == [
        "INSERT INTO t VALUES ('a;b', 'it''s;')",
        '-- x; y\nSELECT "we;ird" FROM t /* c; d */',
        "DO $fn$ BEGIN PERFORM 1; END $fn$",
        "COMMIT",
    ]


@given(
    st.lists(
        st.sampled_from(["COMMIT", "select 'x;y'", "insert into t values (1)", "end"]),
        min_size=1,
        max_size=6,
    )
)
def test_split_returns_the_statements_joined(statements: list[str]) -> None:
    """Fails if splitting loses, merges or reorders statements joined by `;`."""
    assert split_statements(";\n".join(statements)) == statements


def test_commit_is_recognized_in_any_case_form_and_spelling() -> None:
    """Fails if END, COMMIT AND CHAIN or a lower-case commit after a comment is missed."""
    for text in [
        "COMMIT",
        "commit",
        " Commit Work",
        "END",
        "end transaction",
        "COMMIT AND CHAIN",
        "/* why */ commit",
        "-- note\nCOMMIT",
    ]:
        assert is_commit(text), text
    for text in ["SELECT 'COMMIT'", "ROLLBACK", "BEGIN", "committed"]:
        assert not is_commit(text), text


def test_writes_begins_and_rollbacks() -> None:
    """Fails if a WITH ... INSERT is taken for a read or a SELECT for a write."""
    assert may_write("insert into t values (1)")
    assert may_write("(UPDATE t SET a = 1)")
    assert may_write("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x")
    assert not may_write("WITH x AS (SELECT 1) SELECT * FROM x")
    assert not may_write("SELECT 'INSERT'")
    assert not may_write("COPY t FROM STDIN")  # needs the client's data mid-batch
    assert is_begin("start transaction") and is_begin("BEGIN ISOLATION LEVEL SERIALIZABLE")
    assert is_rollback("abort") and is_rollback("ROLLBACK")
