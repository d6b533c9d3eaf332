"""A world's seeded state written out as SQL files its users' own code can load.

An agent team builds its own tools against the world before it is audited on it, so
the world must load outside kaudit: `sqlite3 world.db ".read schema.sql" ".read seed.sql"`
or `psql -f postgresql/schema.sql -f postgresql/seed.sql`. Tables come in dependency
order (a table after every table it references), so the statements run as written
with foreign keys enforced; rows of a table that references itself come parents first.
kaudit's own objects (the change log and its triggers) are never written.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

from kaudit.errors import KauditError
from kaudit.postgres._translate import translate
from kaudit.substrate import StateDump, quote, read_schema
from kaudit.substrate._schema import INTERNAL_PREFIX


@dataclass(frozen=True)
class ExportedWorld:
    """The files `export_world` wrote, and what they hold."""

    files: tuple[Path, ...]
    tables: tuple[str, ...]
    """The tables in the order they are created and filled."""
    rows: int


def dependency_order(conn: sqlite3.Connection) -> list[str]:
    """Every user table, each after the tables its foreign keys reference (ties by name).

    Raises `KauditError` naming the tables when two or more reference each other.
    """
    tables = sorted(read_schema(conn).tables)
    graph = TopologicalSorter[str]()
    for table in tables:
        parents = {row[2] for row in conn.execute(f"PRAGMA foreign_key_list({quote(table)})")}
        graph.add(table, *sorted(parents - {table}))
    try:
        graph.prepare()
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise KauditError(f"tables reference each other ({cycle}): no order loads them") from exc
    order: list[str] = []
    while graph.is_active():
        ready = sorted(graph.get_ready())
        order += ready
        graph.done(*ready)
    return order


def sqlite_schema(conn: sqlite3.Connection, order: list[str]) -> str:
    """SQLite's own DDL of each table, then its indexes, in `order`."""
    lines = ["-- Tables in dependency order; load with: sqlite3 world.db '.read schema.sql'"]
    for table in order:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        lines.append(f"{sql};")
        for (index,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL AND name NOT LIKE ? ORDER BY name",
            (table, INTERNAL_PREFIX + "%"),
        ):
            lines.append(f"{index};")
    return "\n".join(lines) + "\n"


def postgres_schema(conn: sqlite3.Connection, order: list[str]) -> str:
    """The PostgreSQL DDL kaudit's PostgreSQL substrate uses, each table's keys with it."""
    translated = {table.name: table for table in translate(conn)}
    lines = ["-- Tables in dependency order; load with: psql -f schema.sql"]
    for name in order:
        table = translated[name]
        lines.append(f"{table.create};")
        lines += [f"{constraint};" for constraint in table.constraints]
    return "\n".join(lines) + "\n"


def seed_rows(conn: sqlite3.Connection, order: list[str], *, postgres: bool) -> tuple[str, int]:
    """INSERT statements for every row, tables in `order`, in one transaction."""
    lines = ["BEGIN;"]
    count = 0
    for table in order:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({quote(table)})")]
        names = ", ".join(quote(c) for c in columns)
        for row in _parents_first(conn, table, columns):
            values = ", ".join(sql_literal(value, postgres=postgres) for value in row)
            lines.append(f"INSERT INTO {quote(table)} ({names}) VALUES ({values});")
            count += 1
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n", count


def sql_literal(value: Any, *, postgres: bool) -> str:
    """`value` as an SQL literal both dialects read the same (a blob in each one's form)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool | int):
        return str(int(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise KauditError(f"a REAL value {value} has no SQL literal")
        return repr(value)
    if isinstance(value, bytes):
        return f"'\\x{value.hex()}'::bytea" if postgres else f"X'{value.hex()}'"
    return "'" + str(value).replace("'", "''") + "'"


def _parents_first(
    conn: sqlite3.Connection, table: str, columns: list[str]
) -> list[tuple[Any, ...]]:
    """The table's rows in key order, a row after the row of the same table it references."""
    rows = conn.execute(f"SELECT * FROM {quote(table)} ORDER BY rowid").fetchall()
    links = [
        (columns.index(child), columns.index(parent))
        for _, _, target, child, parent, *_ in conn.execute(
            f"PRAGMA foreign_key_list({quote(table)})"
        )
        if target == table and parent is not None
    ]
    if not links:
        return rows
    placed: list[tuple[Any, ...]] = []
    waiting = rows
    while waiting:
        present = [{row[p] for row in placed} for _, p in links]
        ready = [
            row
            for row in waiting
            if all(row[c] is None or row[c] in present[i] or row[c] == row[p]
                   for i, (c, p) in enumerate(links))
        ]  # fmt: skip
        if not ready:
            raise KauditError(f"table {table}: rows reference each other in a cycle")
        placed += ready
        waiting = [row for row in waiting if row not in ready]
    return placed


def export_world(image: bytes, directory: Path) -> ExportedWorld:
    """Write `image`'s schema and rows to `directory` for sqlite3 and for psql.

    `directory/schema.sql` and `seed.sql` load with sqlite3; `directory/postgresql/`
    holds the same for psql. Existing files of those names are replaced.
    """
    conn = StateDump.of(image).open()
    try:
        order = dependency_order(conn)
        pg = directory / "postgresql"
        pg.mkdir(parents=True, exist_ok=True)
        seed, rows = seed_rows(conn, order, postgres=False)
        pg_seed, _ = seed_rows(conn, order, postgres=True)
        written = {
            directory / "schema.sql": sqlite_schema(conn, order),
            directory / "seed.sql": seed,
            pg / "schema.sql": postgres_schema(conn, order),
            pg / "seed.sql": pg_seed,
        }
    finally:
        conn.close()
    for path, text in written.items():
        path.write_text(text, encoding="utf-8")
    return ExportedWorld(tuple(written), tuple(order), rows)


def export_named_world(world: str, directory: Path) -> ExportedWorld:
    """Export a registered world by name, or the world in directory `world`."""
    from kaudit.worlds._directory import DirectoryWorld
    from kaudit.worlds._world import get_world

    path = Path(world)
    found = DirectoryWorld.load(path) if path.is_dir() else get_world(world)
    return export_world(found.template_image(), directory)
