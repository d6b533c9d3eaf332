"""Which rows a scope covers: rows that carry its column, and rows that belong to those.

A scope pins a column to a value (`org_id = ORG_001`). A table that has the column is
*scoped*: its own value decides. A table without it is *owned* when it has a foreign key
to a table the scope covers (scoped or owned, transitively): an invoice line belongs to
its invoice, a CAB approval to its change, so writing either is writing the parent's
data. An owned row is outside the scope when any row its keys reference is outside it;
a NULL key references nothing, and neither does a key whose parent row is gone (a
cascade deleting an in-scope parent's children runs after the parent is deleted, and a
missing parent is refused by the foreign key itself). The keys come from the schema and,
for a schema that declares none, from the world's own `ownership` list.

Both substrates compile the same condition (`outside_sql`): SQLite's temp triggers and
PostgreSQL's row triggers refuse a row for which it holds, so the same writes are
refused with the same (table, key) on both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from kaudit.substrate._schema import ForeignKey, Schema, quote

__all__ = ["Coverage", "coverage"]


@dataclass(frozen=True)
class Coverage:
    """What one scope column covers in a schema: its scoped tables and the owned ones.

    `owners[table]` are the keys of an owned table that lead to covered tables.
    """

    column: str
    value: str
    scoped: frozenset[str]
    owners: Mapping[str, tuple[ForeignKey, ...]]

    def outside_sql(self, table: str, alias: str, *, postgres: bool = False) -> str:
        """An SQL condition true when row `alias` of `table` is outside the scope.

        `alias` is `NEW`, `OLD` or a table alias; subqueries name their rows `o1`, `o2`...
        Parent tables are named with their schema (`main`, `public`), so a temporary
        table the agent creates under a parent's name cannot stand in for it.
        """
        return self._outside(table, alias, postgres, 0, frozenset())

    def _outside(
        self, table: str, alias: str, postgres: bool, depth: int, path: frozenset[str]
    ) -> str:
        if table in self.scoped:
            op = "IS DISTINCT FROM" if postgres else "IS NOT"
            return f"{alias}.{quote(self.column)} {op} {_literal(self.value)}"
        branches: list[str] = []
        for fk in self.owners.get(table, ()):
            if fk.parent in path:
                continue  # a cycle of owned tables: its first table is checked already
            inner = f"o{depth + 1}"
            match = " AND ".join(
                f"{inner}.{quote(p)} = {alias}.{quote(c)}"
                for c, p in zip(fk.child_columns, fk.parent_columns, strict=True)
            )
            parent = self._outside(fk.parent, inner, postgres, depth + 1, path | {table})
            home = "public" if postgres else "main"
            branches.append(
                f"EXISTS (SELECT 1 FROM {home}.{quote(fk.parent)} AS {inner} "
                f"WHERE {match} AND ({parent}))"
            )
        return " OR ".join(branches) or "false"


def coverage(schema: Schema, column: str, value: str, fks: Iterable[ForeignKey]) -> Coverage | None:
    """What the scope `column = value` covers in `schema` through `fks` (None: nothing).

    A key with no parent columns (a world's declaration) references the parent's
    primary key.
    """
    names = {t for t in schema.tables}
    scoped = frozenset(t for t, s in schema.tables.items() if column in s.columns)
    if not scoped:
        return None
    keys = [
        fk
        if fk.parent_columns
        else replace(fk, parent_columns=schema.tables[fk.parent].primary_key)
        for fk in fks
        if fk.child in names and fk.parent in names
    ]
    covered = set(scoped)
    changed = True
    while changed:  # grow the covered set until no table gains an owner
        changed = False
        for fk in keys:
            if fk.child not in covered and fk.parent in covered:
                covered.add(fk.child)
                changed = True
    owners = {
        table: tuple(fk for fk in keys if fk.child == table and fk.parent in covered)
        for table in sorted(covered - scoped)
    }
    return Coverage(column, value, scoped, owners)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
