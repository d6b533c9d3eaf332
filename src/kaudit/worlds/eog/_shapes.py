"""One implementation per tool shape, driven by the tool's plan and its table.

lookup (find one row by fields), list (rows matching optional filters), count
(grouped or total), update (partial update by key), create (new row with the seed's
id scheme), link (create an association row once), unlink (remove an association by
key or by both ends), delete (rows matching at least one filter), send (an outbound
record: a create whose effect leaves the system).

Every write runs inside `Db.atomic()`, so a call that fails half-way leaves no trace.
Timestamps come from the emulation clock, a constant, so runs stay reproducible.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kaudit.substrate import Db, quote
from kaudit.tools import ToolError
from kaudit.worlds.eog._filters import (
    Filter,
    given,
    implied_filters,
    plan_filters,
    sql_value,
    where_clause,
)
from kaudit.worlds.eog._resolve import FILTERED_SHAPES, Shape, ToolPlan
from kaudit.worlds.eog._tables import TableInfo

EMULATED_NOW = "2026-07-16 12:00:00"
"""The emulation clock: every timestamp a tool writes. Constant, so digests reproduce."""

_HIDDEN = re.compile(r"token|password|secret", re.IGNORECASE)
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


@dataclass(frozen=True)
class Caller:
    """Who the tools act as: the organization of the task's `user_info` user, if any."""

    org_id: Any = None


@dataclass(frozen=True)
class IdScheme:
    """How a table's single key column spells new keys, as its seed rows do."""

    column: str
    prefix: str | None = None
    """The text before the number, as in `INC_` of `INC_023`; None for integer keys."""
    width: int = 0
    """The widest number of the seed, to which new numbers are zero-padded."""


def id_scheme(column: str, keys: Iterable[Any]) -> IdScheme | None:
    """The scheme `keys` follow: all integers, or one PREFIX + digits; None when neither."""
    keys = list(keys)
    if all(isinstance(k, int) for k in keys):
        return IdScheme(column)
    parts = [_NUMBERED.match(k) if isinstance(k, str) else None for k in keys]
    prefixes = {m.group(1) for m in parts if m}
    if None in parts or len(prefixes) != 1:
        return None
    return IdScheme(column, prefixes.pop(), max(len(m.group(2)) for m in parts if m))


@dataclass(frozen=True)
class Emulation:
    """Everything a shape needs to run one tool."""

    plan: ToolPlan
    table: TableInfo
    tables: Mapping[str, TableInfo]
    caller: Caller = field(default_factory=Caller)
    bumps_updated: bool = False
    filters: tuple[Filter, ...] = ()
    ids: IdScheme | None = None
    """How a created row's key is spelled; None when the seed's keys follow no scheme."""

    @property
    def name(self) -> str:
        """The table name, quoted for SQL."""
        return quote(self.table.name)


def present(em: Emulation, row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as the tool's output schema describes it (booleans as booleans).

    Without an output schema the whole row is returned, except credential-like columns.
    """
    outputs = em.plan.outputs
    if not outputs:
        return {k: v for k, v in row.items() if not _HIDDEN.search(k)}
    out: dict[str, Any] = {}
    for name, schema in outputs.items():
        if name in row:
            value = row[name]
            is_bool = "boolean" in str(schema.get("type"))
            out[name] = bool(value) if is_bool and value is not None else value
        elif schema.get("format") == "date-time" or name.endswith(("_at", "_on")):
            out[name] = EMULATED_NOW
        elif name == "status":
            out[name] = "success"
    return out


def _key_where(table: TableInfo) -> str:
    return " AND ".join(f"{quote(c)} = ?" for c in table.primary_key)


def _fetch(em: Emulation, db: Db, key: tuple[Any, ...]) -> dict[str, Any] | None:
    return db.one(f"SELECT * FROM {em.name} WHERE {_key_where(em.table)}", key)


def lookup(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """The first row (in key order) matching every given field; none is an error."""
    where, params = where_clause(em.filters, args)
    order = ", ".join(map(quote, em.table.primary_key))
    row = db.one(f"SELECT * FROM {em.name} {where} ORDER BY {order} LIMIT 1", params)
    if row is None:
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        raise ToolError(f"no {em.table.name} found with {shown}")
    return present(em, row)


def list_rows(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Every row matching the given filters (all rows when none is given), in key order."""
    where, params = where_clause(em.filters, args)
    order = ", ".join(map(quote, em.table.primary_key))
    limit = args.get("limit")
    tail = " LIMIT ?" if isinstance(limit, int) else ""
    rows = db.query(
        f"SELECT * FROM {em.name} {where} ORDER BY {order}{tail}",
        [*params, *([limit] if tail else [])],
    )
    return [present(em, row) for row in rows]


def group_column(em: Emulation) -> str | None:
    """The column counts are grouped by: the output's non-count field, or 'grouped by X'."""
    if em.plan.returns_list:
        names = [n for n in em.plan.outputs if n != "count" and em.table.has(n)]
        return names[0] if names else None
    if em.plan.outputs:
        return None
    match = re.search(r"grouped by (\w+)", em.plan.description)
    return match.group(1) if match and em.table.has(match.group(1)) else None


def count(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Counts per group, or one total echoed with the filters that were given."""
    where, params = where_clause(em.filters, args)
    group = group_column(em)
    if group is not None:
        col = quote(group)
        sql = f"SELECT {col} AS grp, COUNT(*) AS n FROM {em.name} {where} GROUP BY {col}"
        rows = db.query(f"{sql} ORDER BY {col}", params)
        return [{group: r["grp"], "count": r["n"]} for r in rows]
    total = db.one(f"SELECT COUNT(*) AS n FROM {em.name} {where}", params)
    echoed = {k: v for k, v in args.items() if k in em.plan.outputs}
    return {**echoed, "count": total["n"] if total else 0}


def update(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Set the given columns of the row with the given key; a missing row is an error."""
    key = tuple(args.get(c) for c in em.table.primary_key)
    changes = {k: v for k, v in args.items() if k not in em.table.primary_key}
    if not changes:
        raise ToolError("nothing to update: give at least one field besides the key")
    with db.atomic():
        if _fetch(em, db, key) is None:
            raise ToolError(f"no {em.table.name} with {em.table.primary_key} = {key}")
        sets = [f"{quote(c)} = ?" for c in changes]
        values = [sql_value(v) for v in changes.values()]
        where = _key_where(em.table)
        if "no changes" in em.plan.description.lower() and _changes_nothing(em, db, key, changes):
            raise ToolError("no changes detected: every field already has that value")
        if em.bumps_updated and em.table.updated and em.table.updated not in changes:
            sets.append(f"{quote(em.table.updated)} = ?")
            values.append(EMULATED_NOW)
        db.execute(f"UPDATE {em.name} SET {', '.join(sets)} WHERE {where}", [*values, *key])
        row = _fetch(em, db, key)
    return present(em, row or {})


def _changes_nothing(
    em: Emulation, db: Db, key: tuple[Any, ...], changes: Mapping[str, Any]
) -> bool:
    """Whether the row already holds every given value (compared with column affinity)."""
    differs = " OR ".join(f"{quote(c)} IS NOT ?" for c in changes)
    sql = f"SELECT 1 AS x FROM {em.name} WHERE {_key_where(em.table)} AND ({differs})"
    return db.one(sql, [*key, *(sql_value(v) for v in changes.values())]) is None


def next_id(db: Db, table: str, scheme: IdScheme) -> Any:
    """The next key in `scheme`: max + 1 for integers, PREFIX + zero-padded (max + 1).

    Only keys that follow the scheme count, so one odd key never derails the numbering.
    """
    column = quote(scheme.column)
    if scheme.prefix is None:
        row = db.one(
            f"SELECT MAX({column}) AS n FROM {quote(table)} WHERE typeof({column}) = 'integer'"
        )
        return (row["n"] if row and row["n"] is not None else 0) + 1
    start = len(scheme.prefix) + 1
    row = db.one(
        f"SELECT MAX(CAST(substr({column}, ?) AS INTEGER)) AS n FROM {quote(table)} "
        f"WHERE typeof({column}) = 'text' AND substr({column}, 1, ?) = ? "
        # all digits, written with ltrim (not GLOB) so PostgreSQL runs the same SQL
        f"AND substr({column}, ?) <> '' AND ltrim(substr({column}, ?), '0123456789') = ''",
        (start, start - 1, scheme.prefix, start, start),
    )
    number = (row["n"] if row and row["n"] is not None else 0) + 1
    return f"{scheme.prefix}{number:0{scheme.width}d}"


def _defaults(em: Emulation, args: dict[str, Any]) -> dict[str, Any]:
    values = {k: sql_value(v) for k, v in args.items()}
    for name, schema in em.plan.inputs.items():
        if name in values:
            continue
        if "default" in schema:
            values[name] = schema["default"]
        elif "defaults to current" in str(schema.get("description", "")).lower():
            values[name] = EMULATED_NOW
    for column in (em.table.created, em.table.updated):
        if column and column not in values:
            values[column] = EMULATED_NOW
    if em.table.has("org_id") and "org_id" not in values and em.caller.org_id is not None:
        values["org_id"] = em.caller.org_id
    return values


def _check_references(em: Emulation, db: Db, values: Mapping[str, Any]) -> None:
    """A value for another table's key column must name an existing row of that table."""
    for other in em.tables.values():
        column = other.primary_key[0] if len(other.primary_key) == 1 else None
        if other.name == em.table.name or column is None or values.get(column) is None:
            continue
        found = db.one(
            f"SELECT 1 AS x FROM {quote(other.name)} WHERE {quote(column)} = ?", [values[column]]
        )
        if found is None:
            raise ToolError(f"no {other.name} with {column} = {values[column]!r}")


def _require_any_of(em: Emulation, args: Mapping[str, Any]) -> None:
    if em.plan.any_of and not any(args.get(n) is not None for n in em.plan.any_of):
        raise ToolError(f"give at least one of {', '.join(em.plan.any_of)}")


def create(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Insert a row with a new key in the seed's scheme; references must exist."""
    _require_any_of(em, args)
    with db.atomic():
        values = _defaults(em, args)
        _check_references(em, db, values)
        if len(em.table.primary_key) == 1 and em.table.primary_key[0] not in values:
            if em.ids is None:
                raise ToolError(
                    f"cannot generate a new {em.table.primary_key[0]}: "
                    "the existing keys follow no single scheme"
                )
            values[em.table.primary_key[0]] = next_id(db, em.table.name, em.ids)
        columns = ", ".join(map(quote, values))
        db.execute(
            f"INSERT INTO {em.name} ({columns}) VALUES ({', '.join('?' * len(values))})",
            list(values.values()),
        )
        row = _fetch(em, db, tuple(values[c] for c in em.table.primary_key))
    return present(em, row or {})


def link_key(em: Emulation) -> tuple[str, ...]:
    """What identifies an association: the required (or any-of) inputs that are not enums."""
    names = dict.fromkeys((*em.plan.required, *em.plan.any_of))
    return tuple(n for n in names if "enum" not in em.plan.inputs.get(n, {}))


def link(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Create an association row unless the same association already exists.

    An end left out counts as NULL, so `change + incident` and `change + problem` are
    different links of the same change.
    """
    _require_any_of(em, args)
    ends = {n: sql_value(args.get(n)) for n in link_key(em)}
    if any(v is not None for v in ends.values()):
        where = " AND ".join(f"{quote(c)} IS ?" for c in ends)
        if db.one(f"SELECT 1 AS x FROM {em.name} WHERE {where}", list(ends.values())) is not None:
            shown = {k: v for k, v in ends.items() if v is not None}
            raise ToolError(f"{em.table.name} already links {shown}")
    return create(em, db, args)


def unlink(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Remove one association, named by its key or by every one of its ends."""
    key = em.table.primary_key
    if all(args.get(c) is not None for c in key):
        match = {c: args[c] for c in key}
    else:
        ends = [n for n in em.plan.inputs if n not in key]
        if not ends or any(args.get(n) is None for n in ends):
            raise ToolError(f"give {' and '.join(key)}, or all of {', '.join(ends)}")
        match = {n: args[n] for n in ends}
    where = " AND ".join(f"{quote(c)} = ?" for c in match)
    with db.atomic():
        removed = db.execute(
            f"DELETE FROM {em.name} WHERE {where}", [sql_value(v) for v in match.values()]
        )
    if removed == 0:
        raise ToolError(f"no {em.table.name} matches {match}")
    return True


def delete(em: Emulation, db: Db, args: dict[str, Any]) -> Any:
    """Delete every row matching the given filters; at least one filter is required."""
    if not given(em.filters, args):
        raise ToolError("at least one filter is required")
    where, params = where_clause(em.filters, args)
    with db.atomic():
        removed = db.execute(f"DELETE FROM {em.name} {where}", params)
    return {"deleted": removed}


SHAPES: dict[Shape, Callable[[Emulation, Db, dict[str, Any]], Any]] = {
    "lookup": lookup,
    "list": list_rows,
    "count": count,
    "update": update,
    "create": create,
    "send": create,
    "link": link,
    "unlink": unlink,
    "delete": delete,
}


def filters_for(plan: ToolPlan, table: TableInfo) -> tuple[Filter, ...]:
    """The predicates a read or delete shape applies (writes that set columns have none)."""
    if plan.shape in FILTERED_SHAPES:
        return plan_filters(plan, table) + (
            implied_filters(plan, table) if plan.shape == "count" else ()
        )
    return ()
