"""The emulated schema: tables and keys from the seed and registry, typed columns.

Column types come from the seed values and the tools' JSON schemas.

Types matter because kaudit's labeler counts a storage-type change (1 -> 1.0, 3 -> '3')
as a change: a column declared with the affinity its values naturally have makes a
valid tool write land in the same storage class the seed used.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kaudit.errors import SpecError
from kaudit.substrate import quote
from kaudit.worlds.eog._registry import DomainRegistry
from kaudit.worlds.eog._seed import Seed

_CREATED = re.compile(r"^(sys_)?created_(on|at)$")
_UPDATED = re.compile(r"^(sys_)?updated_(on|at)$")

JSON_AFFINITY = {"integer": "INTEGER", "boolean": "INTEGER", "number": "REAL", "string": "TEXT"}
STORAGE_AFFINITY = {"integer": "INTEGER", "real": "REAL", "text": "TEXT"}


@dataclass(frozen=True)
class TableInfo:
    """One emulated table: columns in seed order, its key, and its timestamp columns."""

    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...]
    created: str | None = None
    updated: str | None = None

    def has(self, column: str) -> bool:
        """Whether `column` is a column of this table."""
        return column in self.columns


def _first(columns: Iterable[str], pattern: re.Pattern[str]) -> str | None:
    return next((c for c in columns if pattern.match(c)), None)


def table_infos(seed: Seed, registry: DomainRegistry) -> dict[str, TableInfo]:
    """Every table the seed fills, keyed as the registry says; an unregistered table is an error."""
    tables: dict[str, TableInfo] = {}
    for name, columns in seed.columns.items():
        key = registry.primary_keys.get(name)
        if key is None:
            raise SpecError(seed.path, name, f"no primary key registered for table {name!r}")
        missing = [c for c in key if c not in columns]
        if missing:
            raise SpecError(
                seed.path, name, f"registered key columns {missing} are not in the seed"
            )
        tables[name] = TableInfo(
            name, columns, key, _first(columns, _CREATED), _first(columns, _UPDATED)
        )
    return tables


def json_types(schema: Mapping[str, object] | None) -> set[str]:
    """The non-null JSON types a property schema allows."""
    if not schema:
        return set()
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {str(k) for k in kinds if k not in (None, "null")}


def declared_affinity(evidence: set[str], storage: set[str]) -> str:
    """The affinity a column is declared with.

    The tools' schemas win when they agree on one affinity (the live servers typed the
    column so; e.g. a foreign key quoted as '3' in the seed is an integer column);
    otherwise the seed's storage classes decide, and a column whose values mix classes
    keeps no affinity so every value stays exactly as seeded.
    """
    schema = {JSON_AFFINITY[t] for t in evidence if t in JSON_AFFINITY}
    if len(schema) == 1:
        return schema.pop()
    seen = {STORAGE_AFFINITY.get(s, "") for s in storage if s != "null"}
    if seen == {"INTEGER", "REAL"}:
        return "REAL"
    return seen.pop() if len(seen) == 1 else ""


def storage_classes(seed: Seed) -> dict[str, dict[str, set[str]]]:
    """`typeof()` of every seeded value, per table and column, loaded into untyped tables."""
    conn = sqlite3.connect(":memory:")
    try:
        for table, columns in seed.columns.items():
            conn.execute(f"CREATE TABLE {quote(table)} ({', '.join(map(quote, columns))})")
        for statement in seed.statements:
            conn.execute(statement.sql)
        return {
            table: {
                c: {
                    row[0]
                    for row in conn.execute(
                        f"SELECT DISTINCT typeof({quote(c)}) FROM {quote(table)}"
                    )
                }
                for c in columns
            }
            for table, columns in seed.columns.items()
        }
    finally:
        conn.close()


def create_sql(table: TableInfo, affinity: Mapping[str, str]) -> str:
    """`CREATE TABLE` with the inferred affinities and the registered (maybe composite) key."""
    columns = [f"{quote(c)} {affinity.get(c, '')}".rstrip() for c in table.columns]
    key = ", ".join(quote(c) for c in table.primary_key)
    return f"CREATE TABLE {quote(table.name)} ({', '.join(columns)}, PRIMARY KEY ({key}))"
