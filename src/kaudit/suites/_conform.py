"""Load-time validation of tasks against their world's schema.

A task-file mistake must never be scored as agent behaviour: a `where` naming a missing
column matches no row (so the oracle's own change is damage), a check with invalid SQL
fails every run, and a misspelt `dollars_from` (or one naming a text column) prices
real damage at nothing. So every
table and column a task names is looked up in the schema of the world it runs on, and
every check is compiled (never run) against that schema under the same read-only
sandbox the labeler uses. An identity's scope columns and granted tables are looked up
too (a misspelt scope column would switch the scope off), and a fault rule's tools
among the task's. The first problem raises `SpecError` naming file and field.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from kaudit.errors import SpecError
from kaudit.label.checks import bind_sql, sandboxed
from kaudit.spec import Identity, Task
from kaudit.spec._damage import AllowRule, PriceRule
from kaudit.substrate import Schema, affinity, quote, read_schema

__all__ = ["check_against_schema", "check_identity", "identity_problems", "schema_problems"]

Problem = tuple[str, str]
"""(field, reason), e.g. ("damage.allowed[0].where.stauts", "no column stauts in incidents")."""


def _columns(schema: Schema, table: str) -> set[str]:
    found = schema.tables.get(table)
    return set() if found is None else set(found.columns) | {"rowid"}


def _table_problems(task: Task, schema: Schema) -> Iterator[Problem]:
    spec = task.damage
    for kind, rules in (("allowed", spec.allowed), ("pricing", spec.pricing)):
        for i, rule in enumerate(rules):
            where = f"damage.{kind}[{i}]"
            if rule.table != "*" and rule.table not in schema.tables:
                yield f"{where}.table", f"no table {rule.table} in the world"
                continue
            known = (
                _columns(schema, rule.table)
                if rule.table != "*"
                else set().union(*(_columns(schema, t) for t in schema.tables))
            )
            named = [("where", c) for c in rule.where]
            if isinstance(rule, AllowRule):
                named += [("columns", c) for c in rule.columns or ()]
            if isinstance(rule, PriceRule) and rule.dollars_from:
                named += [("dollars_from", rule.dollars_from)]
            for field, column in named:
                if column not in known:
                    yield f"{where}.{field}", f"no column {column} in table {rule.table}"
    for table, columns in spec.volatile.items():
        for column in columns:
            if column not in _columns(schema, table):
                yield f"damage.volatile.{table}", f"no column {column} in table {table}"
    for table in spec.unpriced:
        if table not in schema.tables:
            yield "damage.unpriced", f"no table {table} in the world"


def identity_problems(identity: Identity, schema: Schema, prefix: str = "") -> Iterator[Problem]:
    """Scope columns and granted tables of `identity` that the world's schema lacks.

    A misspelt scope column would otherwise pin no table at all, switching the scope
    off without a word; a misspelt table in the grant would never be reachable.
    """
    columns = {c for table in schema.tables.values() for c in table.columns}
    for column in identity.scope:
        if column not in columns:
            yield f"{prefix}scope.{column}", f"no table in the world has a column {column}"
    for table in identity.tables or {}:
        if table not in schema.tables:
            yield f"{prefix}tables.{table}", f"no table {table} in the world"


def _fault_problems(task: Task) -> Iterator[Problem]:
    """Fault rules naming a tool the task does not offer: they could never fire."""
    for i, rule in enumerate(task.faults):
        for tool in rule.tools or ():
            if tool not in task.tools:
                yield f"faults[{i}].tools", f"no tool {tool} among the task's tools"


def _check_problems(task: Task, image: bytes) -> Iterator[Problem]:
    with sandboxed(image) as (conn, guard):
        for i, check in enumerate(task.checks):
            field = f"checks[{i}].sql"
            try:
                sql, values = bind_sql(check.sql, task.params)
                conn.execute(f"EXPLAIN {sql}", values).fetchall()  # compiles, never runs
            except KeyError as exc:
                yield field, f"check {check.name!r} uses unbound param {exc.args[0]}"
            except sqlite3.Error as exc:
                denied = f"denied {guard.denied[0]}; checks may only read" if guard.denied else ""
                yield field, f"check {check.name!r}: {denied or f'SQLite error: {exc}'}"
            guard.denied.clear()


def _money_problems(task: Task, conn: sqlite3.Connection, schema: Schema) -> Iterator[Problem]:
    """A `dollars_from` column declared as text or blob holds no amount: every price is null."""
    for i, rule in enumerate(task.damage.pricing):
        if not rule.dollars_from:
            continue
        tables = [rule.table] if rule.table != "*" else sorted(schema.tables)
        for table in tables:
            for row in conn.execute(f"PRAGMA table_info({quote(table)})"):
                if row[1] != rule.dollars_from:
                    continue
                declared = str(row[2] or "")
                if declared and affinity(declared) in ("TEXT", "BLOB"):
                    yield (
                        f"damage.pricing[{i}].dollars_from",
                        f"column {rule.dollars_from} of {table} is declared {declared}, "
                        "not a number: it cannot hold an amount of money",
                    )


def schema_problems(task: Task, image: bytes) -> list[Problem]:
    """Every table, column and check of `task` that the world image `image` cannot serve."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)
        schema = read_schema(conn)
        money = list(_money_problems(task, conn, schema))
    finally:
        conn.close()
    found = [*_table_problems(task, schema), *money, *_fault_problems(task)]
    if task.identity is not None:
        found += identity_problems(task.identity, schema, "identity.")
    return [*found, *_check_problems(task, image)]


def _schema_of(image: bytes) -> Schema:
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)
        return read_schema(conn)
    finally:
        conn.close()


def check_identity(
    identity: Identity, source: Path, tasks: Iterable[Task], image_of: Callable[[Task], bytes]
) -> None:
    """Raise `SpecError` naming `source` and the field for what a task's world lacks.

    `identity` was read from `source` for the tasks that declare none; tasks that
    declare their own never use it, so they are not checked against it.
    """
    for task in tasks:
        if task.identity is not None:
            continue
        problems = list(identity_problems(identity, _schema_of(image_of(task))))
        if problems:
            field, reason = problems[0]
            raise SpecError(source, field, f"{reason} (world {task.world}, task {task.id})")


def check_against_schema(
    tasks: Mapping[str, Task], image_of: Callable[[Task], bytes], origin: Mapping[str, Path]
) -> None:
    """Raise `SpecError` (file, field, reason) for the first task its world cannot serve.

    `image_of(task)` gives the seeded image of the task's world; `origin[task.id]` the
    file the task came from.
    """
    for task in tasks.values():
        problems = schema_problems(task, image_of(task))
        if problems:
            field, reason = problems[0]
            raise SpecError(origin.get(task.id, task.id), field, reason)
