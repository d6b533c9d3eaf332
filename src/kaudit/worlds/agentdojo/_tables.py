"""An AgentDojo environment (a pydantic model) as SQLite tables with primary keys, and back.

Each top-level part of the environment (`bank_account`, `filesystem`, ...) becomes:
- a one-row table named after it for its plain fields (key `row` = 1);
- a table per list of models, keyed by the items' `id` when they have one, else by
  position (`transactions` by id);
- a table per dict, keyed by the dict's key (`files` by `key`, the path).
List and dict tables keep a `position` column so the environment reads back in the
order AgentDojo's tools see it (`get_most_recent_transactions` slices the list's end).
Anything nested deeper is stored as JSON text in its column.
"""

from __future__ import annotations

import json
import sqlite3
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter

from kaudit.errors import SuiteError
from kaudit.substrate import quote

LAYOUT_VERSION = "1"
"""Bump when the mapping changes what a template contains."""

Kind = Literal["one", "list", "dict"]
ONE_KEY = "row"
POSITION = "position"
DICT_KEY = "key"
VALUE = "value"

_SQL_TYPES: dict[Any, str] = {int: "INTEGER", float: "REAL", bool: "INTEGER", str: "TEXT"}


@dataclass(frozen=True)
class Column:
    """One column: its SQL type and whether its value is stored as JSON text."""

    name: str
    sql_type: str
    json: bool
    annotation: Any


@dataclass(frozen=True)
class TableLayout:
    """Where a table's rows live in the environment: `part.field` (or the part itself)."""

    name: str
    part: str
    field: str | None
    kind: Kind
    key: str
    columns: tuple[Column, ...]
    item_model: type[BaseModel] | None

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column, the key first."""
        extra = () if self.kind == "one" or self.key == POSITION else (POSITION,)
        return (self.key, *extra, *(c.name for c in self.columns if c.name != self.key))


def _plain(annotation: Any) -> Any:
    """`X | None` as X; other annotations unchanged."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _column(name: str, annotation: Any) -> Column:
    plain = _plain(annotation)
    sql_type = _SQL_TYPES.get(plain)
    return Column(name, sql_type or "TEXT", sql_type is None, annotation)


def _model_columns(model: type[BaseModel]) -> tuple[Column, ...]:
    return tuple(_column(n, f.annotation) for n, f in model.model_fields.items())


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _collection_table(part: str, field: str, annotation: Any) -> TableLayout | None:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and args and _is_model(args[0]):
        item: type[BaseModel] = args[0]
        key = "id" if "id" in item.model_fields else POSITION
        return TableLayout(field, part, field, "list", key, _model_columns(item), item)
    if origin is dict and len(args) == 2 and args[0] is str:
        if _is_model(args[1]):
            return TableLayout(
                field, part, field, "dict", DICT_KEY, _model_columns(args[1]), args[1]
            )
        return TableLayout(field, part, field, "dict", DICT_KEY, (_column(VALUE, args[1]),), None)
    return None


def layout_of(env_type: type[BaseModel]) -> tuple[TableLayout, ...]:
    """The tables of environments of type `env_type`; an unmappable part is a SuiteError."""
    tables: list[TableLayout] = []
    for part, info in env_type.model_fields.items():
        if not _is_model(info.annotation):
            raise SuiteError(f"agentdojo environment part {part!r} is not a model")
        model = typing.cast(type[BaseModel], info.annotation)
        plain: list[Column] = []
        for field, finfo in model.model_fields.items():
            collection = _collection_table(part, field, finfo.annotation)
            if collection is not None:
                tables.append(collection)
            else:
                plain.append(_column(field, finfo.annotation))
        if plain:
            tables.append(TableLayout(part, part, None, "one", ONE_KEY, tuple(plain), None))
    names = [t.name for t in tables]
    return tuple(
        t if names.count(t.name) == 1 else _renamed(t, f"{t.part}_{t.name}") for t in tables
    )


def _renamed(table: TableLayout, name: str) -> TableLayout:
    return TableLayout(
        name, table.part, table.field, table.kind, table.key, table.columns, table.item_model
    )


def create_sql(table: TableLayout) -> str:
    """CREATE TABLE with the key as primary key."""
    types_by_name = {c.name: c.sql_type for c in table.columns}
    types_by_name.setdefault(table.key, "TEXT" if table.kind == "dict" else "INTEGER")
    types_by_name[POSITION] = "INTEGER"
    if table.kind == "one":
        types_by_name[ONE_KEY] = "INTEGER"
    cols = ", ".join(f"{quote(c)} {types_by_name[c]}" for c in table.column_names)
    return f"CREATE TABLE {quote(table.name)} ({cols}, PRIMARY KEY ({quote(table.key)}))"


def _stored(column: Column, value: Any) -> Any:
    if value is None:
        return None
    if column.json:
        dumped = TypeAdapter(column.annotation).dump_python(value, mode="json")
        return json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    return int(value) if isinstance(value, bool) else value


def _row(table: TableLayout, key: Any, position: int, item: Any) -> dict[str, Any]:
    row: dict[str, Any] = {table.key: key}
    if table.kind != "one" and table.key != POSITION:
        row[POSITION] = position
    for column in table.columns:
        value = getattr(item, column.name) if isinstance(item, BaseModel) else item
        row[column.name] = _stored(column, value)
    return row


def rows_of(tables: Sequence[TableLayout], env: BaseModel) -> dict[str, dict[Any, dict[str, Any]]]:
    """Every table's rows by key, as they are stored."""
    out: dict[str, dict[Any, dict[str, Any]]] = {}
    for table in tables:
        part = getattr(env, table.part)
        if table.kind == "one":
            out[table.name] = {1: _row(table, 1, 0, part)}
            continue
        value = getattr(part, table.field or "")
        items = value.items() if table.kind == "dict" else enumerate(value)
        rows: dict[Any, dict[str, Any]] = {}
        for position, (index, item) in enumerate(items):
            key = index if table.kind == "dict" else (item.id if table.key == "id" else position)
            rows[key] = _row(table, key, position, item)
        out[table.name] = rows
    return out


def build_tables(conn: sqlite3.Connection, tables: Sequence[TableLayout], env: BaseModel) -> None:
    """Create the tables and insert the environment's rows."""
    rows = rows_of(tables, env)
    for table in tables:
        conn.execute(create_sql(table))
        for row in rows[table.name].values():
            conn.execute(_insert_sql(table.name, row), tuple(row.values()))


def _insert_sql(name: str, row: Mapping[str, Any]) -> str:
    cols = ", ".join(quote(c) for c in row)
    marks = ", ".join("?" for _ in row)
    return f"INSERT INTO {quote(name)} ({cols}) VALUES ({marks})"


Query = Callable[[str], list[dict[str, Any]]]
"""Runs a SELECT and returns its rows as dicts (a tool's `ctx.db.query`, or a connection)."""


def _loaded(column: Column, value: Any) -> Any:
    return json.loads(value) if column.json and isinstance(value, str) else value


def read_env(tables: Sequence[TableLayout], env_type: type[BaseModel], query: Query) -> BaseModel:
    """The environment the tables hold, validated by AgentDojo's own model."""
    parts: dict[str, dict[str, Any]] = {part: {} for part in env_type.model_fields}
    for table in tables:
        order = ONE_KEY if table.kind == "one" else POSITION
        rows = query(f"SELECT * FROM {quote(table.name)} ORDER BY {quote(order)}")
        if table.kind == "one":
            row = rows[0] if rows else {}
            parts[table.part].update({c.name: _loaded(c, row.get(c.name)) for c in table.columns})
            continue
        values = [{c.name: _loaded(c, r.get(c.name)) for c in table.columns} for r in rows]
        if table.kind == "list":
            parts[table.part][table.field or ""] = values
        elif table.item_model is None:
            parts[table.part][table.field or ""] = {
                r[DICT_KEY]: v[VALUE] for r, v in zip(rows, values, strict=True)
            }
        else:
            parts[table.part][table.field or ""] = {
                r[DICT_KEY]: v for r, v in zip(rows, values, strict=True)
            }
    return env_type.model_validate(parts)


def connection_query(conn: sqlite3.Connection) -> Query:
    """A `Query` over a plain sqlite3 connection."""

    def query(sql: str) -> list[dict[str, Any]]:
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    return query


Execute = Callable[[str, Sequence[Any]], int]


def write_changes(
    tables: Sequence[TableLayout],
    before: Mapping[str, Mapping[Any, Mapping[str, Any]]],
    after: Mapping[str, Mapping[Any, Mapping[str, Any]]],
    execute: Execute,
) -> int:
    """Row-level statements turning `before` into `after`; returns how many rows changed.

    Only what changed is written, so the gateway, the boundary and the change capture
    see each row a tool touched, by its key, exactly as a hand-written tool's writes.
    """
    changed = 0
    for table in tables:
        old, new = before[table.name], after[table.name]
        name, key = quote(table.name), quote(table.key)
        for gone in old.keys() - new.keys():
            changed += execute(f"DELETE FROM {name} WHERE {key} = ?", (gone,))
        for k, row in new.items():
            if k not in old:
                changed += execute(_insert_sql(table.name, row), tuple(row.values()))
                continue
            diff = {c: v for c, v in row.items() if old[k].get(c) != v}
            if diff:
                sets = ", ".join(f"{quote(c)} = ?" for c in diff)
                changed += execute(f"UPDATE {name} SET {sets} WHERE {key} = ?", (*diff.values(), k))
    return changed
