"""Filters of list, count, lookup and delete tools, planned once from the input schema.

Each input becomes a SQL predicate on one column: equality by default, `LIKE` where
the property says "partial match", `COLLATE NOCASE` where the tool says
"case-insensitive", bounds for `*_after` / `*_before` / `*_range_start` / `*_range_end`,
`IN` for arrays. Values are always bound parameters.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kaudit.errors import SpecError
from kaudit.substrate import quote
from kaudit.worlds.eog._resolve import ToolPlan, column_for
from kaudit.worlds.eog._tables import TableInfo

FilterOp = Literal["eq", "nocase", "like", "ge", "le", "in", "search"]

CONTROL_INPUTS = frozenset({"limit"})
"""Inputs that shape the answer rather than filter rows."""

_SEARCH_ON = re.compile(r"search on ([\w/, ]+?)(?: and\b|\.|$)", re.IGNORECASE)


@dataclass(frozen=True)
class Filter:
    """One input as a predicate: `columns` holds one column, or several for a text search."""

    param: str
    op: FilterOp
    columns: tuple[str, ...]
    fixed: Any = None
    """A value the tool's name implies (e.g. `breached` -> has_breached = 1); None for inputs."""


def _search_columns(plan: ToolPlan, table: TableInfo) -> tuple[str, ...]:
    match = _SEARCH_ON.search(plan.description)
    named = re.split(r"[/, ]+", match.group(1)) if match else []
    found = tuple(c for c in named if table.has(c))
    if not found:
        raise SpecError(
            "tool-inventory", plan.name, "cannot tell which columns search_text searches"
        )
    return found


def _column_filter(
    plan: ToolPlan, table: TableInfo, param: str, schema: Mapping[str, Any]
) -> Filter:
    column = column_for(param, table)
    if column is None:
        close = difflib.get_close_matches(param, table.columns, n=1, cutoff=0.85)
        if not close:
            raise SpecError(
                "tool-inventory", f"{plan.name}.{param}", f"no column of {table.name} fits"
            )
        return Filter(param, "eq", (close[0],))  # e.g. list_incidents' `called_id` -> caller_id
    if param.endswith(("_after", "_range_start")):
        return Filter(param, "ge", (column,))
    if param.endswith(("_before", "_range_end")):
        return Filter(param, "le", (column,))
    if schema.get("type") == "array" or column != param:
        return Filter(param, "in", (column,))
    if "partial match" in str(schema.get("description", "")).lower():
        return Filter(param, "like", (column,))
    if "case-insensitive" in plan.description.lower():
        return Filter(param, "nocase", (column,))
    return Filter(param, "eq", (column,))


def implied_filters(plan: ToolPlan, table: TableInfo) -> tuple[Filter, ...]:
    """Flags a tool's name implies: a name word `w` with a `has_w` / `is_w` column means w = 1."""
    found: list[Filter] = []
    for word in plan.name.split("_"):
        for column in (f"has_{word}", f"is_{word}"):
            if table.has(column) and column not in plan.inputs:
                found.append(Filter(column, "eq", (column,), fixed=1))
    return tuple(found)


def plan_filters(
    plan: ToolPlan, table: TableInfo, skip: frozenset[str] = frozenset()
) -> tuple[Filter, ...]:
    """A predicate for every input except `skip` and the control inputs."""
    filters: list[Filter] = []
    for param, schema in plan.inputs.items():
        if param in skip or param in CONTROL_INPUTS:
            continue
        if param == "search_text":
            filters.append(Filter(param, "search", _search_columns(plan, table)))
        else:
            filters.append(_column_filter(plan, table, param, schema))
    return tuple(filters)


def sql_value(value: Any) -> Any:
    """A value as SQLite stores it: booleans as 0 / 1, everything else unchanged."""
    return int(value) if isinstance(value, bool) else value


def _like(value: Any) -> str:
    escaped = str(value).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _predicate(f: Filter, value: Any) -> tuple[str, list[Any]]:
    col = quote(f.columns[0])
    if f.op == "in":
        items = [sql_value(v) for v in value]
        return f"{col} IN ({', '.join('?' * len(items))})", items
    if f.op == "search":
        parts = [f"{quote(c)} LIKE ? ESCAPE '\\'" for c in f.columns]
        return "(" + " OR ".join(parts) + ")", [_like(value)] * len(parts)
    if f.op == "like":
        return f"{col} LIKE ? ESCAPE '\\'", [_like(value)]
    if f.op == "nocase":
        return f"{col} = ? COLLATE NOCASE", [value]
    operator = {"eq": "=", "ge": ">=", "le": "<="}[f.op]
    return f"{col} {operator} ?", [sql_value(value)]


def where_clause(filters: tuple[Filter, ...], values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """`WHERE ...` (or '') for the filters that have a value, and its parameters in order."""
    parts: list[str] = []
    params: list[Any] = []
    for f in filters:
        value = f.fixed if f.fixed is not None else values.get(f.param)
        if value is None or (isinstance(value, list) and not value):
            continue
        sql, bound = _predicate(f, value)
        parts.append(sql)
        params.extend(bound)
    return ("WHERE " + " AND ".join(parts) if parts else ""), params


def given(filters: tuple[Filter, ...], values: Mapping[str, Any]) -> bool:
    """Whether at least one real (not implied) filter has a value."""
    return any(f.fixed is None and values.get(f.param) not in (None, []) for f in filters)
