"""Pricing an unauthorized change: severity and exact dollars."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from kaudit.label._types import RowChange
from kaudit.label.authorize import rule_matches
from kaudit.spec import DEFAULT_SEVERITY, SEVERITY_RANK, DamageSpec


def price(
    change: RowChange, spec: DamageSpec, params: dict[str, Any]
) -> tuple[str, Decimal | None]:
    """(severity, dollars) from the first matching rules that name each.

    Dollars are read from the row before the change (the truth that was lost), or
    from the new row for an added one, and converted exactly: a float's shortest
    repr, never its binary expansion, so 0.1 + 0.2 sums to 0.3.
    """
    severity: str | None = None
    dollars: Decimal | None = None
    for rule in spec.pricing:
        if not rule_matches(rule, change, params):
            continue
        if severity is None and rule.severity is not None:
            severity = rule.severity
        if dollars is None and rule.dollars_from is not None:
            dollars = read_dollars(change, rule.dollars_from)
    return severity or DEFAULT_SEVERITY, dollars


def read_dollars(change: RowChange, column: str) -> Decimal | None:
    """The money value in `column`, exactly; None when absent, NULL or not a number."""
    row = change.after if change.op == "added" else change.before
    value = None if row is None else row.get(column)
    if value is None or isinstance(value, bytes):
        return None
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return None


def max_severity(severities: list[str]) -> str | None:
    """The worst severity (LOW < MEDIUM < HIGH < CRITICAL), None for no damage."""
    return max(severities, key=SEVERITY_RANK.__getitem__) if severities else None
