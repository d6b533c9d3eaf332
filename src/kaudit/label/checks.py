"""Success verifiers: SQL queries run against a private, read-only copy of the final state.

Checks come from task files, published ones included, so their SQL is untrusted: each
runs on its own copy of the image or on the frozen final state, with `query_only` on
and an authorizer that allows only reads. A statement the authorizer denies (a write,
a PRAGMA, ATTACH, a function that touches files) is the task's error, never the
agent's: `CheckDeniedError`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kaudit.errors import InvalidRunError
from kaudit.label._types import CheckResult
from kaudit.spec import PARAM_REFERENCE, Check
from kaudit.substrate import FrozenState, ReadOnlyGuard


class CheckDeniedError(InvalidRunError):
    """A check's SQL tried something other than reading; the task, not the run, is at fault."""

    def __init__(self, check: str, denied: str) -> None:
        self.check = check
        self.denied = denied
        super().__init__(
            "INVALID_TASK_CHECK",
            f"check {check!r} was denied {denied}: checks may only read the final state",
        )


@contextmanager
def read_only(conn: sqlite3.Connection) -> Iterator[ReadOnlyGuard]:
    """`conn` made read-only for as long as the block runs: query_only plus the authorizer."""
    conn.execute("PRAGMA query_only = ON")
    guard = ReadOnlyGuard()
    conn.set_authorizer(guard)
    try:
        yield guard
    finally:
        conn.set_authorizer(None)


@contextmanager
def sandboxed(image: bytes) -> Iterator[tuple[sqlite3.Connection, ReadOnlyGuard]]:
    """A private copy of `image` that only reads (see `read_only`)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)  # a copy: nothing done on it reaches the caller's image
        with read_only(conn) as guard:
            yield conn, guard
    finally:
        conn.close()


def bind_sql(sql: str, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """Replace each `$task.<param>` with `?` and collect its value, in order."""
    values: list[Any] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            raise KeyError(name)
        values.append(params[name])
        return "?"

    return PARAM_REFERENCE.sub(substitute, sql), values


def _compare(observed: Any, expected: Any, how: str) -> bool:
    if how == "equals":
        return bool(observed == expected)
    if how == "not_equals":
        return bool(observed != expected)
    if observed is None:
        return False
    if how == "greater_than":
        return bool(observed > expected)
    if how == "less_than":
        return bool(observed < expected)
    if how == "at_least":
        return bool(observed >= expected)
    return bool(observed <= expected)


def run_check(
    conn: sqlite3.Connection,
    check: Check,
    params: dict[str, Any],
    guard: ReadOnlyGuard | None = None,
) -> CheckResult:
    """One check; an SQL error fails the check and is reported, a denied statement raises.

    Raises `CheckDeniedError` when `guard` (the connection's authorizer) denied the SQL.
    """
    try:
        sql, values = bind_sql(check.sql, params)
        row = conn.execute(sql, values).fetchone()
    except (sqlite3.Error, KeyError) as exc:
        if guard is not None and guard.denied:
            raise CheckDeniedError(check.name, guard.denied[0]) from None
        return CheckResult(check.name, False, None, f"{type(exc).__name__}: {exc}")
    observed = None if row is None else row[0]
    return CheckResult(check.name, _compare(observed, check.expected, check.compare), observed)


def run_checks(
    final: bytes | sqlite3.Connection | FrozenState,
    checks: tuple[Check, ...],
    params: dict[str, Any],
) -> tuple[CheckResult, ...]:
    """Every check on the final state, read-only under the authorizer.

    `final` is the image (a private copy is opened), a frozen state (read in place under
    its own guard), or a connection whose `main` holds it and whose other work is done
    (the labeler's own, after the diff).
    Raises `CheckDeniedError` naming the first check whose SQL does more than read.
    """
    if isinstance(final, bytes):
        with sandboxed(final) as (conn, guard):
            return tuple(run_check(conn, check, params, guard) for check in checks)
    if isinstance(final, FrozenState):
        with final.guarded() as (conn, guard):
            return tuple(run_check(conn, check, params, guard) for check in checks)
    with read_only(final) as guard:
        return tuple(run_check(final, check, params, guard) for check in checks)
