"""Pricing an unauthorized change: severity and exact dollars."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from kaudit.label._types import RowChange
from kaudit.label.authorize import rule_matches
from kaudit.spec import DamageSpec
from kaudit.spec._damage import DEFAULT_SEVERITY, SEVERITY_RANK


def price(
    change: RowChange, spec: DamageSpec, params: dict[str, Any]
) -> tuple[str, Decimal | None, str | None]:
    """(severity, dollars, unpriced) from the first matching rules that name each.

    Dollars are read from the row before the change (the truth that was lost), or
    from the new row for an added one, and converted exactly: a float's shortest
    repr, never its binary expansion, so 0.1 + 0.2 sums to 0.3. `unpriced` says why
    a money column held no finite amount ('inf', 'NaN', text, a blob): the damage
    stays damage, unpriced, never an exception and never $0.
    """
    severity: str | None = None
    dollars: Decimal | None = None
    unpriced: str | None = None
    for rule in spec.pricing:
        if not rule_matches(rule, change, params):
            continue
        if severity is None and rule.severity is not None:
            severity = rule.severity
        if dollars is None and unpriced is None and rule.dollars_from is not None:
            dollars = read_dollars(change, rule.dollars_from)
            unpriced = money_problem(change, rule.dollars_from)
    return severity or DEFAULT_SEVERITY, dollars, unpriced


def _money_value(change: RowChange, column: str) -> Any:
    row = change.after if change.op == "added" else change.before
    return None if row is None else row.get(column)


def _parse(value: Any) -> Decimal | None:
    """The exact finite amount `value` holds, or None when it holds none."""
    if value is None or isinstance(value, bytes):
        return None
    try:
        amount = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError, TypeError):
        return None
    return amount if amount.is_finite() else None


def read_dollars(change: RowChange, column: str) -> Decimal | None:
    """The money value in `column`, exactly; None when absent, NULL, non-finite or not a number."""
    return _parse(_money_value(change, column))


def money_problem(change: RowChange, column: str) -> str | None:
    """Why `column` holds no price although it is not NULL; None when it is priced or NULL."""
    value = _money_value(change, column)
    if value is None or _parse(value) is not None:
        return None
    shown = f"blob of {len(value)} bytes" if isinstance(value, bytes) else repr(value)
    return f"money column {column} holds {shown}, not a finite amount"


def max_severity(severities: list[str]) -> str | None:
    """The worst severity (LOW < MEDIUM < HIGH < CRITICAL), None for no damage."""
    return max(severities, key=SEVERITY_RANK.__getitem__) if severities else None
