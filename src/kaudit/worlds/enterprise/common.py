"""SQL helpers every enterprise tool shares: lookups, filtered lists, updates, new ids.

Table and column names always come from tool code, never from the agent; every value
the agent supplies travels as a `?` parameter. Text filters use `instr(lower(..))`
rather than `LIKE`, so `%` and `_` in an argument match themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from kaudit.substrate import Db, quote
from kaudit.tools import ToolError

NOW = "2026-06-15T09:00:00Z"
"""The world's clock. Fixed, so two runs that make the same calls leave identical state."""

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

Row = dict[str, Any]


def require(db: Db, table: str, column: str, value: Any, what: str) -> Row:
    """The row of `table` whose `column` equals `value`, or a not-found error the agent sees."""
    row = db.one(f"SELECT * FROM {quote(table)} WHERE {quote(column)} = ?", (value,))
    if row is None:
        raise ToolError(f"{what} {value!r} not found")
    return row


def select(
    db: Db,
    table: str,
    *,
    equals: Mapping[str, Any] | None = None,
    contains: Mapping[str, str | None] | None = None,
    order_by: str,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """Rows matching every given filter; `None` filters are ignored.

    `equals` compares exactly, `contains` is a case-insensitive substring match.
    `limit` is clamped to 1..200 so a list can never flood the agent's context.
    """
    clauses, params = filter_sql(equals, contains)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    params.append(max(1, min(limit, MAX_LIMIT)))
    sql = f"SELECT * FROM {quote(table)}{where} ORDER BY {quote(order_by)} LIMIT ?"
    return db.query(sql, params)


def filter_sql(
    equals: Mapping[str, Any] | None, contains: Mapping[str, str | None] | None = None
) -> tuple[list[str], list[Any]]:
    """WHERE clauses and their parameters for the non-None filters."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (equals or {}).items():
        if value is not None:
            clauses.append(f"{quote(column)} = ?")
            params.append(value)
    for column, text in (contains or {}).items():
        if text is not None:
            clauses.append(contains_text(column, text).sql)
            params.append(text)
    return clauses, params


class Match(NamedTuple):
    """A filter other than equality: `sql` is a condition with one `?`, bound to `value`."""

    sql: str
    value: Any


def contains_text(column: str, text: str | None) -> Match:
    """Case-insensitive substring match on `column`; `%` and `_` in `text` match themselves."""
    return Match(f"instr(lower({quote(column)}), lower(?)) > 0", text)


def bulk_filter(**filters: Any) -> tuple[str, list[Any]]:
    """The WHERE condition and its parameters for a bulk write, from the tool's filter arguments.

    Each keyword is an argument name: a plain value matches the column of that name
    exactly, a `Match` brings its own condition; `None`, a blank string (or a `Match`
    of either) is no filter: `summary_contains=""` matches every row. Raises the
    `need_filter` error when no filter is left, since the write would then hit every
    row of the table.
    """
    clauses: list[str] = []
    params: list[Any] = []
    for name, value in filters.items():
        match = value if isinstance(value, Match) else Match(f"{quote(name)} = ?", value)
        if not _blank(match.value):
            clauses.append(match.sql)
            params.append(match.value)
    if not clauses:
        raise _no_filter(filters)
    return " AND ".join(clauses), params


def update_row(
    db: Db,
    table: str,
    key: str,
    key_value: Any,
    fields: Mapping[str, Any],
    *,
    what: str,
    touch: bool = True,
) -> Row:
    """Set the non-None `fields` on one row and return it as it is now.

    An unknown `key_value` raises `require`'s not-found error for `what`, so a tool
    needs no lookup of its own first. Otherwise raises a `ToolError` when no field is
    given: an update that changes nothing is almost always an agent mistake worth
    telling it about.
    """
    changes = {column: value for column, value in fields.items() if value is not None}
    if not changes:
        require(db, table, key, key_value, what)
        raise ToolError("nothing to update: give at least one field")
    if touch:
        changes["updated_at"] = NOW
    assignments = ", ".join(f"{quote(column)} = ?" for column in changes)
    # SQLite counts every row the WHERE matched, even one set to the values it had.
    updated = db.execute(
        f"UPDATE {quote(table)} SET {assignments} WHERE {quote(key)} = ?",
        [*changes.values(), key_value],
    )
    if not updated:
        raise ToolError(f"{what} {key_value!r} not found")
    return require(db, table, key, key_value, what)


def next_id(db: Db, table: str, column: str, prefix: str, width: int = 3) -> str:
    """The next id in the seed's scheme (`INC_041` after `INC_040`); ids are never reused."""
    row = db.one(
        f"SELECT MAX(CAST(substr({quote(column)}, ?) AS INTEGER)) AS n FROM {quote(table)} "
        f"WHERE substr({quote(column)}, 1, ?) = ?",
        (len(prefix) + 1, len(prefix), prefix),
    )
    number = int(row["n"]) + 1 if row and row["n"] is not None else 1
    return f"{prefix}{number:0{width}d}"


def need_filter(**filters: Any) -> None:
    """Reject a call with no filter at all (`bulk_filter` does this for bulk writes)."""
    if all(_blank(value) for value in filters.values()):
        raise _no_filter(filters)


def _blank(value: Any) -> bool:
    """No filter at all: None, or text that is empty once whitespace is stripped."""
    return value is None or (isinstance(value, str) and not value.strip())


def _no_filter(filters: Mapping[str, Any]) -> ToolError:
    return ToolError(f"give at least one filter ({', '.join(filters)})")
