"""Success verifiers: SQL queries run against a private, read-only copy of the final state.

Checks come from task files, published ones included, so their SQL is untrusted: each
runs on its own copy of the image or on the frozen final state, with `query_only` on
and an authorizer that allows only reads. Its SQL is compiled under `CHECK_SQL`, so a
statement the frozen connection compiled for kaudit itself (release's `ROLLBACK`, the
labeler's `ATTACH`) is never reused for a check without being asked about. A statement
the authorizer denies (a write, a PRAGMA, ATTACH, a function that touches files) is the
task's error, never the agent's: `CheckDeniedError`. So is SQL that errors on a state
it compiles against, or runs past its `CheckBudget` (steps, seconds, value size):
`CheckFailedError`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kaudit.errors import InvalidRunError
from kaudit.label._budget import (
    DEFAULT_CHECK_BUDGET,
    CheckBudget,
    checks_interrupted,
    interruption,
    metered,
)
from kaudit.label._types import CheckResult
from kaudit.spec._damage import PARAM_REFERENCE
from kaudit.spec._task import Check, is_number
from kaudit.substrate import FrozenState
from kaudit.substrate._gate import CHECK_SQL, ReadOnlyGuard


class CheckFailedError(InvalidRunError):
    """A check could not say whether the run succeeded; the task, not the run, is at fault.

    Its SQL failed on a final state whose schema it compiles against (a runtime error such
    as `VACUUM INTO` or a too-big blob), or it ran past its `CheckBudget`.
    """

    def __init__(self, check: str, reason: str) -> None:
        self.check = check
        self.reason = reason
        super().__init__("INVALID_TASK_CHECK", f"check {check!r} {reason}")


class CheckDeniedError(CheckFailedError):
    """A check's SQL tried something other than reading; the task, not the run, is at fault."""

    def __init__(self, check: str, denied: str) -> None:
        self.denied = denied
        super().__init__(check, f"was denied {denied}: checks may only read the final state")


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
    if not is_number(observed) or not is_number(expected):
        return False  # NULL, text or a blob the agent left is not above or below a number
    if how == "greater_than":
        return bool(observed > expected)
    if how == "less_than":
        return bool(observed < expected)
    if how == "at_least":
        return bool(observed >= expected)
    return bool(observed <= expected)


def _compiles(conn: sqlite3.Connection, sql: str, values: list[Any]) -> bool:
    """Whether `sql` compiles against `conn`'s schema (EXPLAIN prepares, never runs it)."""
    try:
        conn.execute(f"{CHECK_SQL}EXPLAIN {sql}", values).fetchall()
    except sqlite3.Error:
        return False
    return True


def run_check(
    conn: sqlite3.Connection,
    check: Check,
    params: dict[str, Any],
    guard: ReadOnlyGuard | None = None,
    budget: CheckBudget = DEFAULT_CHECK_BUDGET,
) -> CheckResult:
    """One check under `budget`; it fails when the agent's state defeats its SQL.

    Every check compiled against the initial schema at load, so SQL that no longer
    compiles meets a schema the run changed (a dropped table): the check fails. SQL that
    compiles and still errors, or runs past `budget`, cannot judge any run: it raises
    `CheckFailedError` (`CheckDeniedError` when `guard`, the connection's authorizer,
    denied it). A Ctrl-C during the check raises what `interruption` says.
    """
    try:
        sql, values = bind_sql(check.sql, params)
    except KeyError as exc:
        raise CheckFailedError(check.name, f"uses unbound param {exc.args[0]}") from None
    with metered(conn, budget) as meter:
        try:
            row = conn.execute(CHECK_SQL + sql, values).fetchone()
        except sqlite3.Error as exc:
            error = exc
        else:
            observed = None if row is None else row[0]
            passed = _compare(observed, check.expected, check.compare)
            return CheckResult(check.name, passed, observed)
    if checks_interrupted():
        raise interruption()
    if guard is not None and guard.denied:
        raise CheckDeniedError(check.name, guard.denied[0]) from None
    if meter.stopped:
        raise CheckFailedError(check.name, f"ran past {meter.stopped}") from None
    if not _compiles(conn, sql, values):
        return CheckResult(check.name, False, None, f"{type(error).__name__}: {error}")
    reason = " ".join(f"failed on the final state ({type(error).__name__}: {error})".split())
    raise CheckFailedError(check.name, reason) from None


def run_checks(
    final: bytes | sqlite3.Connection | FrozenState,
    checks: tuple[Check, ...],
    params: dict[str, Any],
    budget: CheckBudget = DEFAULT_CHECK_BUDGET,
) -> tuple[CheckResult, ...]:
    """Every check on the final state, read-only under the authorizer, each under `budget`.

    `final` is the image (a private copy is opened), a frozen state (read in place under
    its own guard), or a connection whose `main` holds it and whose other work is done
    (the labeler's own, after the diff).
    Raises `CheckFailedError` naming the first check that errors or exceeds the budget
    (`CheckDeniedError` for one whose SQL does more than read).
    """
    if isinstance(final, bytes):
        with sandboxed(final) as (conn, guard):
            return tuple(run_check(conn, check, params, guard, budget) for check in checks)
    if isinstance(final, FrozenState):
        with final.guarded() as (conn, guard):
            return tuple(run_check(conn, check, params, guard, budget) for check in checks)
    with read_only(final) as guard:
        return tuple(run_check(final, check, params, guard, budget) for check in checks)
