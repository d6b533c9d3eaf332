"""Success verifiers: SQL queries run against the final state image."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from kaudit.label._types import CheckResult
from kaudit.spec import PARAM_REFERENCE, Check


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


def run_check(conn: sqlite3.Connection, check: Check, params: dict[str, Any]) -> CheckResult:
    """One check; an SQL error fails the check and is reported, never raised."""
    try:
        sql, values = bind_sql(check.sql, params)
        row = conn.execute(sql, values).fetchone()
    except (sqlite3.Error, KeyError) as exc:
        return CheckResult(check.name, False, None, f"{type(exc).__name__}: {exc}")
    observed = None if row is None else row[0]
    return CheckResult(check.name, _compare(observed, check.expected, check.compare), observed)


def run_checks(
    conn: sqlite3.Connection, checks: tuple[Check, ...], params: dict[str, Any]
) -> tuple[CheckResult, ...]:
    """Every check on `conn`, whose `main` database is the final state, made read-only."""
    conn.execute("PRAGMA query_only = ON")
    return tuple(run_check(conn, check, params) for check in checks)
