"""An AgentDojo environment (a pydantic model) as SQLite tables with primary keys, and back.

Each top-level part of the environment (`bank_account`, `filesystem`, ...) becomes:
- a one-row table named after it for its plain fields (key `row` = 1);
- a table per list of models, keyed by the items' `id` when they have one, else by
  position (`transactions` by id);
- a table per dict, keyed by the dict's key (`files` by `key`, the path);
- a list of plain values (`users`) is a table of `value`s keyed by position;
- a dict of lists (`user_inbox`: user -> messages) is two tables: `user_inbox_keys`
  holds the dict's keys (an empty list is still a key), `user_inbox` one row per item,
  keyed by (`key`, the item's `id` or its position in that list), so an allow rule can
  name one message rather than a whole inbox.
List and dict tables keep a `position` column so the environment reads back in the
order AgentDojo's tools see it (`get_most_recent_transactions` slices the list's end).
Anything nested deeper is stored as JSON text in its column. A part's field named as a
log (`logs`: what reading appends to, such as visited URLs) stays a JSON column of the
part's one-row table and is declared volatile, so a read is never a state change.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sqlite3
import types
import typing
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter

from kaudit.errors import SuiteError
from kaudit.substrate import quote

LAYOUT_VERSION = "3"
"""Bump when the mapping changes what a template contains."""

Kind = Literal["one", "list", "dict", "items"]
ONE_KEY = "row"
POSITION = "position"
DICT_KEY = "key"
VALUE = "value"
KEYS_SUFFIX = "_keys"

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
    volatile: tuple[str, ...] = ()
    """Log columns masked from every diff (a one-row table's `logs`)."""
    items: str | None = None
    """For a dict of lists' keys table: the table holding the lists' items."""

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The primary key: the dict's key then the item's for an items table."""
        return (DICT_KEY, self.key) if self.kind == "items" else (self.key,)

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column, the key first."""
        extra = () if self.kind == "one" or self.key == POSITION else (POSITION,)
        keys = self.key_columns
        return (*keys, *extra, *(c.name for c in self.columns if c.name not in keys))

    def key_of(self, row: Mapping[str, Any]) -> Any:
        """A stored row's key: a scalar, or a tuple for an items table."""
        if self.kind == "items":
            return tuple(row[c] for c in self.key_columns)
        return row[self.key]

    def key_values(self, key: Any) -> dict[str, Any]:
        """A key (as `rows_of` gives it) by column."""
        values = key if self.kind == "items" else (key,)
        return dict(zip(self.key_columns, values, strict=True))


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


def _item_key(annotation: Any) -> str:
    """A model item's `id` when it has one, else its position."""
    return "id" if _is_model(annotation) and "id" in annotation.model_fields else POSITION


def _item_columns(annotation: Any) -> tuple[Column, ...]:
    return _model_columns(annotation) if _is_model(annotation) else (_column(VALUE, annotation),)


def _item_model(annotation: Any) -> type[BaseModel] | None:
    return typing.cast(type[BaseModel], annotation) if _is_model(annotation) else None


def _is_plain_list(annotation: Any) -> bool:
    """A list of models or of plain values (not of lists or dicts: those stay JSON)."""
    if typing.get_origin(annotation) is not list or not typing.get_args(annotation):
        return False
    item = typing.get_args(annotation)[0]
    return _is_model(item) or _plain(item) in _SQL_TYPES


def _collection_tables(part: str, field: str, annotation: Any) -> tuple[TableLayout, ...]:
    """The tables of a list or dict field; () when the field is a plain column."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if _is_plain_list(annotation):
        item = args[0]
        table = TableLayout(
            field, part, field, "list", _item_key(item), _item_columns(item), _item_model(item)
        )
        return (table,)
    if origin is not dict or len(args) != 2 or args[0] is not str:
        return ()
    value = args[1]
    if _is_plain_list(value):
        item = typing.get_args(value)[0]
        keys = TableLayout(
            f"{field}{KEYS_SUFFIX}", part, field, "dict", DICT_KEY, (), None, items=field
        )
        items = TableLayout(
            field, part, field, "items", _item_key(item), _item_columns(item), _item_model(item)
        )
        return keys, items
    return (
        TableLayout(field, part, field, "dict", DICT_KEY, _item_columns(value), _item_model(value)),
    )


def layout_of(
    env_type: type[BaseModel], logs: Mapping[str, Collection[str]] | None = None
) -> tuple[TableLayout, ...]:
    """The tables of environments of type `env_type`; an unmappable part is a SuiteError.

    `logs` names, per part, the fields that record reads rather than state (kept as
    volatile JSON columns of the part's one-row table).
    """
    tables: list[TableLayout] = []
    for part, info in env_type.model_fields.items():
        if not _is_model(info.annotation):
            raise SuiteError(f"agentdojo environment part {part!r} is not a model")
        model = typing.cast(type[BaseModel], info.annotation)
        part_logs = tuple((logs or {}).get(part, ()))
        plain: list[Column] = []
        for field, finfo in model.model_fields.items():
            collections = (
                () if field in part_logs else _collection_tables(part, field, finfo.annotation)
            )
            tables.extend(collections)
            if not collections:
                plain.append(_column(field, finfo.annotation))
        if plain:
            volatile = tuple(c.name for c in plain if c.name in part_logs)
            tables.append(
                TableLayout(part, part, None, "one", ONE_KEY, tuple(plain), None, volatile)
            )
    names = [t.name for t in tables]
    renamed = {t.name: f"{t.part}_{t.name}" for t in tables if names.count(t.name) > 1}
    return tuple(
        dataclasses.replace(
            t,
            name=renamed.get(t.name, t.name),
            items=None if t.items is None else renamed.get(t.items, t.items),
        )
        for t in tables
    )


def create_sql(table: TableLayout) -> str:
    """CREATE TABLE with the key as primary key."""
    types_by_name = {c.name: c.sql_type for c in table.columns}
    types_by_name.setdefault(table.key, "TEXT" if table.kind == "dict" else "INTEGER")
    types_by_name[POSITION] = "INTEGER"
    if table.kind == "one":
        types_by_name[ONE_KEY] = "INTEGER"
    if table.kind == "items":
        types_by_name[DICT_KEY] = "TEXT"
    cols = ", ".join(f"{quote(c)} {types_by_name[c]}" for c in table.column_names)
    key = ", ".join(quote(c) for c in table.key_columns)
    return f"CREATE TABLE {quote(table.name)} ({cols}, PRIMARY KEY ({key}))"


@functools.cache
def _column_adapter(annotation: Any) -> TypeAdapter[Any]:
    """A JSON column's serializer, built once per annotation.

    Building a `TypeAdapter` costs ~0.6 ms (an `EmailStr` looks up the email-validator
    package's version each time); workspace stores ~1,600 JSON values per environment,
    so one per value made loading the suite take hours.
    """
    return TypeAdapter(annotation)


def _stored(column: Column, value: Any) -> Any:
    if value is None:
        return None
    if column.json:
        dumped = _column_adapter(column.annotation).dump_python(value, mode="json")
        return json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    return int(value) if isinstance(value, bool) else value


def _row(table: TableLayout, key: Any, position: int, item: Any) -> dict[str, Any]:
    row: dict[str, Any] = table.key_values(key)
    if table.kind != "one" and table.key != POSITION:
        row[POSITION] = position
    for column in table.columns:
        value = getattr(item, column.name) if isinstance(item, BaseModel) else item
        row[column.name] = _stored(column, value)
    return row


def _keyed(table: TableLayout, value: Any) -> Iterator[tuple[Any, int, Any]]:
    """(key, position, item) of each row a list or dict field holds."""
    if table.kind == "items":
        for owner, items in value.items():
            for position, item in enumerate(items):
                yield (owner, item.id if table.key == "id" else position), position, item
    elif table.kind == "dict":
        for position, (key, item) in enumerate(value.items()):
            yield key, position, () if table.items else item
    else:
        for position, item in enumerate(value):
            yield item.id if table.key == "id" else position, position, item


def rows_of(tables: Sequence[TableLayout], env: BaseModel) -> dict[str, dict[Any, dict[str, Any]]]:
    """Every table's rows by key, as they are stored."""
    out: dict[str, dict[Any, dict[str, Any]]] = {}
    for table in tables:
        part = getattr(env, table.part)
        if table.kind == "one":
            out[table.name] = {1: _row(table, 1, 0, part)}
            continue
        value = getattr(part, table.field or "")
        out[table.name] = {
            key: _row(table, key, position, item) for key, position, item in _keyed(table, value)
        }
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
        items: list[Any] = values if table.item_model or table.items else [v[VALUE] for v in values]
        field = table.field or ""
        if table.kind == "list":
            parts[table.part][field] = items
        elif table.kind == "items":
            # The keys table came first (layout order) and holds every key, empty lists too.
            lists = parts[table.part].setdefault(field, {})
            for row, item in zip(rows, items, strict=True):
                lists.setdefault(row[DICT_KEY], []).append(item)
        elif table.items is not None:
            parts[table.part][field] = {r[DICT_KEY]: [] for r in rows}
        elif table.item_model is None:
            parts[table.part][table.field or ""] = {
                r[DICT_KEY]: v[VALUE] for r, v in zip(rows, values, strict=True)
            }
        else:
            parts[table.part][table.field or ""] = {
                r[DICT_KEY]: v for r, v in zip(rows, values, strict=True)
            }
    env = env_type.model_validate(parts)
    # Some parts rebuild a field in a validator (an inbox's `emails` from its
    # `initial_emails`): set every stored field back, so what a tool wrote is what it reads.
    for part, fields in parts.items():
        model = getattr(env, part)
        for name, raw in fields.items():
            setattr(model, name, _adapter(type(model), name).validate_python(raw))
    return env


_ADAPTERS: dict[tuple[type[BaseModel], str], TypeAdapter[Any]] = {}


def _adapter(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    """A validator for one field, built once (building one costs more than using it)."""
    key = (model, field)
    if key not in _ADAPTERS:
        annotation: Any = model.model_fields[field].annotation
        _ADAPTERS[key] = TypeAdapter(annotation)
    return _ADAPTERS[key]


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
        name = quote(table.name)
        where = " AND ".join(f"{quote(c)} = ?" for c in table.key_columns)
        for gone in old.keys() - new.keys():
            key = tuple(table.key_values(gone).values())
            changed += execute(f"DELETE FROM {name} WHERE {where}", key)
        for k, row in new.items():
            if k not in old:
                changed += execute(_insert_sql(table.name, row), tuple(row.values()))
                continue
            diff = {c: v for c, v in row.items() if old[k].get(c) != v}
            if diff:
                sets = ", ".join(f"{quote(c)} = ?" for c in diff)
                key = tuple(table.key_values(k).values())
                changed += execute(
                    f"UPDATE {name} SET {sets} WHERE {where}", (*diff.values(), *key)
                )
    return changed
