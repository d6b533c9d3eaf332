"""What the authorizer never reports is read from the words, never from comments or literals."""

from __future__ import annotations

import pytest

from kaudit.substrate._statement import needs_reading, read_statement


@pytest.mark.parametrize(
    ("sql", "kind", "unsafe", "vacuums"),
    [
        ("INSERT OR ROLLBACK INTO t VALUES (1)", "INSERT", True, False),
        ("insert into t values ('or rollback')", "INSERT", False, False),
        ("UPDATE t SET a = 1 -- or rollback", "UPDATE", False, False),
        ('SELECT "rollback" FROM t /* OR ROLLBACK */', "SELECT", False, False),
        ("CREATE TABLE u (a REFERENCES t DEFERRABLE INITIALLY DEFERRED)", "CREATE", True, False),
        ("CREATE TABLE u (a, 'deferrable')", "CREATE", False, False),
        ("CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT RAISE(ROLLBACK, 'n'); END", "CREATE",
         True, False),
        (";; /* ' */ VACUUM", "VACUUM", False, True),
        ("EXPLAIN VACUUM", "VACUUM", False, False),
        ("SELECT 'vacuum'", "SELECT", False, False),
        ("/* unterminated VACUUM", "", False, False),
    ],
)  # fmt: skip
def test_conflict_clauses_and_vacuum_are_read_outside_comments_and_literals(
    sql: str, kind: str, unsafe: bool, vacuums: bool
) -> None:
    """Fails if a word inside a literal, a quoted name or a comment counted (a harmless
    statement would then fail a pooled run inside atomic()), if empty statements before
    the first hid its kind (`;; VACUUM` ran inside the run's transaction and failed), or
    if `EXPLAIN VACUUM` (compiled, never run) were taken for a VACUUM."""
    statement = read_statement(sql)
    assert needs_reading(sql) or not (unsafe or vacuums)
    assert (statement.kind, statement.rolls_back_or_defers, statement.vacuums) == (
        kind,
        unsafe,
        vacuums,
    )
