"""SQLite row triggers, written in one place for their three uses.

kaudit follows rows with triggers three ways: the change log baked into every template
(`kaudit.substrate._capture`: which rows a run touched), the temporary copies a
production watch takes (`kaudit.monitor`: each touched row's value before the
transaction) and a boundary's temporary scope guards (`kaudit.boundary`: refuse a
write outside the scope). The caller decides which tables get which triggers; how each
trigger, its row references, literals and aborts are written is here, so the three
cannot drift apart in quoting or in how they treat `INSERT OR REPLACE`.

SQLite keeps a trigger's text as written (after its name), so the change log's text is
part of every template's bytes and digest: its layout, line break included, must stay
as it is unless `CAPTURE_VERSION` is bumped and templates are rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from kaudit.substrate._schema import INTERNAL_PREFIX, TableSchema, quote

Timing = Literal["BEFORE", "AFTER"]
Event = Literal["INSERT", "UPDATE", "DELETE"]

_TEMPLATE_BREAK = "\n" + " " * 16
"""Where the change log's INSERT and UPDATE triggers break before BEGIN (template bytes)."""
_SCOPED_ROWS: tuple[tuple[Event, tuple[str, ...]], ...] = (
    ("INSERT", ("NEW",)),
    ("UPDATE", ("OLD", "NEW")),
    ("DELETE", ("OLD",)),
)
"""The rows a scope guard checks per event: an UPDATE may neither leave nor enter the scope."""
_RECURSIVE = "(SELECT recursive_triggers FROM pragma_recursive_triggers)"


def sql_text(value: str) -> str:
    """`value` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def column_list(names: Iterable[str], row: str = "") -> str:
    """Quoted column names, comma-separated; each of `row` (`NEW.`, `OLD.`, `t.`) when given."""
    return ", ".join(row + quote(name) for name in names)


def abort(message: str, when: str | None = None) -> str:
    """A statement that fails the triggering statement with `message` (if `when` holds).

    An abort in a trigger undoes the whole statement that fired it, as a constraint does.
    """
    condition = "" if when is None else f" WHERE {when}"
    return f"SELECT RAISE(ABORT, {sql_text(message)}){condition};"


def row_trigger(
    name: str,
    timing: Timing,
    event: Event,
    table: str,
    body: Sequence[str],
    *,
    temp: bool = False,
    on_main: bool = False,
    when: str | None = None,
    if_not_exists: bool = False,
    before_begin: str = " ",
) -> str:
    """`CREATE TRIGGER` for each row `event` on `table`; `body` statements end in `;`.

    `on_main` names `main.table`: a temporary trigger on a main table must, or the name
    could resolve to a temporary table of the same name.
    """
    kind = "TEMP TRIGGER" if temp else "TRIGGER"
    guard = " IF NOT EXISTS" if if_not_exists else ""
    target = ("main." if on_main else "") + quote(table)
    condition = "" if when is None else f" WHEN {when}"
    head = f"CREATE {kind}{guard} {quote(name)} {timing} {event} ON {target}{condition}"
    return f"{head}{before_begin}BEGIN {' '.join(body)} END"


def change_log_triggers(
    table: TableSchema,
    log: str,
    width: int,
    *,
    check_recursive: bool,
    nullable_key: tuple[str, ...],
) -> list[str]:
    """The template's INSERT, DELETE and UPDATE triggers logging each touched row of `table`.

    `width` is the log's number of key columns; `check_recursive` records whether the
    writing connection had `recursive_triggers` on (a pragma read per row, so only where
    a REPLACE can delete a row no trigger would log); `nullable_key` lists the key
    columns SQLite would store a NULL in, refused as NOT NULL would refuse it.
    """
    new = _log_entry(table, log, "NEW", width, check_recursive)
    old = _log_entry(table, log, "OLD", width, False)
    refuse_insert = _null_key_refusals(table.name, nullable_key, update=False)
    refuse_update = _null_key_refusals(table.name, nullable_key, update=True)

    def trigger(kind: str, event: Event, body: Sequence[str], before_begin: str) -> str:
        name = f"{INTERNAL_PREFIX}{kind}_{table.name}"
        return row_trigger(
            name, "AFTER", event, table.name, body, if_not_exists=True, before_begin=before_begin
        )

    return [
        trigger("ins", "INSERT", (refuse_insert, new), _TEMPLATE_BREAK),
        trigger("del", "DELETE", (old,), " "),
        trigger("upd", "UPDATE", (refuse_update, old, new), _TEMPLATE_BREAK),
    ]


def _log_entry(table: TableSchema, log: str, row: str, width: int, check_recursive: bool) -> str:
    """One log insert of `row` (NEW or OLD): table, rowid, recursive flag, typed key parts."""
    rid = f"{row}.rowid" if table.has_rowid else "NULL"
    keys = [f"{row}.{quote(c)}" for c in table.primary_key]
    keys += ["NULL"] * (width - len(keys))
    columns = ", ".join(f"k{i}" for i in range(width))
    recursive = _RECURSIVE if check_recursive else "NULL"
    values = ", ".join([sql_text(table.name), rid, recursive, *keys])
    return f"INSERT INTO {log}(tbl, rid, recursive, {columns}) VALUES ({values});"


def _null_key_refusals(table: str, columns: tuple[str, ...], update: bool) -> str:
    """Aborts for a NULL written into a key column; on UPDATE only a key newly set to NULL.

    So a template's own NULL-keyed rows stay writable.
    """
    out = []
    for column in columns:
        when = f"NEW.{quote(column)} IS NULL"
        if update:
            when += f" AND OLD.{quote(column)} IS NOT NULL"
        out.append(abort(f"NOT NULL constraint failed: {table}.{column}", when))
    return " ".join(out)


def watch_triggers(
    table: TableSchema,
    *,
    names: dict[Event, str],
    before: str,
    new: str,
    touched: tuple[str, int],
    active: str,
) -> list[str]:
    """A production watch's temporary triggers on `table`, each firing while `active` holds.

    Before an UPDATE or DELETE the row's first pre-transaction value is copied into the
    `before` table; an INSERT logs its key into `new` (a row this transaction inserted
    had no value before it, so the copy skips it). `touched` is (table, number): the
    number is marked there on the table's first change. `names` are the triggers' names.
    """
    key = table.primary_key
    stored = (*key, *(c for c in table.columns if c not in key))
    old_key = " AND ".join(f"{quote(k)} = OLD.{quote(k)}" for k in key)
    new_key = old_key.replace("OLD.", "NEW.")
    marks, n = touched
    # Plain INSERT guarded by NOT EXISTS, never INSERT OR IGNORE: an outer statement's
    # conflict policy (INSERT OR REPLACE) overrides the one of a statement in a
    # trigger body, and would overwrite the first copy with a later value.
    mark = f"INSERT INTO {marks} SELECT {n} WHERE NOT EXISTS (SELECT 1 FROM {marks} WHERE n = {n});"
    copy_old = (
        f"INSERT INTO {before} ({column_list(stored)}) SELECT {column_list(stored, 'OLD.')} "
        f"WHERE NOT EXISTS (SELECT 1 FROM {new} WHERE {old_key}) "
        f"AND NOT EXISTS (SELECT 1 FROM {before} WHERE {old_key});"
    )
    log_new = (
        f"INSERT INTO {new} ({column_list(key)}) SELECT {column_list(key, 'NEW.')} "
        f"WHERE NOT EXISTS (SELECT 1 FROM {before} WHERE {new_key}) "
        f"AND NOT EXISTS (SELECT 1 FROM {new} WHERE {new_key});"
    )

    def trigger(timing: Timing, event: Event, first: str) -> str:
        body = (first, mark)
        return row_trigger(
            names[event], timing, event, table.name, body, temp=True, on_main=True, when=active
        )

    return [
        trigger("BEFORE", "UPDATE", copy_old),
        trigger("BEFORE", "DELETE", copy_old),
        trigger("AFTER", "INSERT", log_new),
    ]


def scope_triggers(
    table: str,
    key: tuple[str, ...],
    column: str,
    *,
    name_prefix: str,
    outside: Callable[[str], str],
    note: str,
    reason: str,
) -> list[str]:
    """A boundary's temporary triggers refusing a write to a row of `table` outside its scope.

    `outside(row)` is the SQL condition that `row` (NEW or OLD) lies outside the scope
    on `column`; an UPDATE is refused if either side does. The refused row's key goes
    to the SQL function `note` (table, key as JSON, column) before the abort with `reason`.
    """
    out: list[str] = []
    for event, rows in _SCOPED_ROWS:
        key_sql = "json_array(" + column_list(key, f"{rows[0]}.") + ")"
        when = " OR ".join(f"({outside(row)})" for row in rows)
        body = (f"SELECT {note}({sql_text(table)}, {key_sql}, {sql_text(column)});", abort(reason))
        name = f"{name_prefix}{event.lower()}_{table}_{column}"
        out.append(
            row_trigger(name, "BEFORE", event, table, body, temp=True, on_main=True, when=when)
        )
    return out
