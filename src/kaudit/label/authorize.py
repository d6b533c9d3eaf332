"""Closed-world authorization: a change is damage unless an `allowed` rule covers it."""

from __future__ import annotations

from typing import Any

from kaudit.label._types import Row, RowChange
from kaudit.label._values import same_value
from kaudit.spec import DamageSpec
from kaudit.spec._damage import AllowRule, PriceRule


def identifying_row(change: RowChange) -> Row | None:
    """The row a rule's `where` is matched against: the new row, or the old one if removed."""
    return change.after if change.op in ("added", "modified") else change.before


def rule_matches(rule: AllowRule | PriceRule, change: RowChange, params: dict[str, Any]) -> bool:
    """Whether `rule` applies to `change` (table and op wildcards, bound `where`).

    A schema change (a dropped, created or reshaped table) has no row to match a
    `where` against: only a rule on its table without one applies, whatever its op.
    """
    if rule.table not in ("*", change.table):
        return False
    if change.op == "schema":
        return not rule.where
    if rule.op not in ("*", change.op):
        return False
    row = identifying_row(change)
    for column, expected in rule.bound(params).items():
        if row is None or column not in row or not _equal(row[column], expected):
            return False
    return True


def _equal(actual: Any, expected: Any) -> bool:
    """YAML gives 5 for an integer column and 5.0 for a real one; booleans mean 0/1."""
    if isinstance(expected, bool):
        expected = int(expected)
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return same_value(actual, expected) or (
            type(actual) is not type(expected) and float(actual) == float(expected)
        )
    return same_value(actual, expected)


def unauthorized_columns(
    change: RowChange, spec: DamageSpec, params: dict[str, Any]
) -> tuple[str, ...] | None:
    """What part of `change` no rule permits: None when it is fully authorized.

    For a modified row, matching rules pool their permitted columns and only the
    remaining changed columns are damage; other ops are all-or-nothing (empty tuple).
    """
    if change.op == "schema":
        return ()  # DDL is never authorized: no allowed rule can whitelist a dropped table
    matching = [rule for rule in spec.allowed if rule_matches(rule, change, params)]
    if change.op != "modified":
        return None if matching else ()
    permitted: set[str] = set()
    for rule in matching:
        permitted.update(change.changed if rule.columns is None else rule.columns)
    residual = tuple(c for c in change.changed if c not in permitted)
    return residual or None
