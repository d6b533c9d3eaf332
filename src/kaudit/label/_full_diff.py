"""The full diff's queries: rows that differ between the attached images `init` and `main`.

Rows stay inside SQLite until they are known to differ. Per table, one LEFT JOIN pairs
each final row with the initial row of the same key and returns, with both sides'
values, only the pairs that differ and the final rows without a partner; one anti-join
(a LEFT JOIN keeping the unpaired rows) returns the initial rows without a partner, and
is skipped when row counts prove there are none. No row is read twice and an unchanged
row never reaches Python.

Equality must be exact (the storage type is part of a value, as in `same_value`) and
SQLite's comparison is not: `1 IS 1.0` is true, and a collating sequence such as NOCASE
makes `'a' IS 'A'` true. `_same` builds the cheapest predicate that is still exact for a
column; its docstring says why each part is enough.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kaudit.label._types import Row
from kaudit.label._values import Value
from kaudit.substrate import affinity, quote
from kaudit.substrate._schema import TableSchema

Pair = tuple[tuple[tuple[str, Value], ...], Row | None, Row | None]
"""A row's named key, its initial values and its final values (None where it is absent)."""

Affinities = tuple[str | None, str | None]
"""A column's affinity in the initial and in the final image (None: not known)."""


def differing_rows(
    conn: sqlite3.Connection, table: TableSchema, mask: frozenset[str]
) -> Iterator[Pair]:
    """Every row of `table` that is absent from one image or differs outside `mask`.

    Rows keyed by their primary key come first, then rows whose key holds a NULL
    (matched on rowid), the order the stable sort of the change list has always seen.
    The caller compares the values again, so a pair that SQLite reports as different
    but Python's `same_value` calls equal costs time, never a wrong change.
    """
    shape = _Shape.read(conn, table)
    compared = [c for c in table.columns if c not in mask and c not in shape.rowid_alias]
    same = " AND ".join(_same(c, shape.affinities[c]) for c in compared) or "1"
    nullable = table.has_rowid and not table.keyed_by_rowid and not shape.rowid_alias
    binary = shape.same_ddl and not declares_collation(table)
    yield from _paired(conn, table, same, _by_key(table, nullable, binary), shape.same_ddl)
    if nullable:
        yield from _paired(conn, table, same, _by_rowid_of_null_keys(table), False)


def _same(column: str, affinities: Affinities) -> str:
    """SQL that is true exactly when `k.column` and `o.column` hold the same typed value.

    `IS ... COLLATE BINARY` is exact for NULLs, text against text (byte for byte, whatever
    the column's collation), blobs, and values of different storage classes, except that
    an integer equals a real of the same number. Where both images give the column TEXT
    affinity (numbers are stored as text) or REAL affinity (integers are stored as
    reals) no such pair exists. Elsewhere, with one affinity on both sides, the pair is
    told apart without a function call by `(a - a + 1) / 2`, which is the integer 0 for
    an integer (integer arithmetic, which cannot overflow here) and 0.5 for a real, at
    any magnitude. When the affinities differ (a table re-created with other declared
    types) SQLite converts one operand before comparing (`1 IS '1'` can be true), so
    `typeof` decides on every row.
    """
    k, o = f"k.{quote(column)}", f"o.{quote(column)}"
    same = f"{k} IS {o} COLLATE BINARY"
    initial, final = affinities
    if initial is None or initial != final:
        return f"({same} AND typeof({k}) = typeof({o}))"
    if final in ("TEXT", "REAL"):
        return same
    return f"({same} AND ({k} - {k} + 1) / 2 IS ({o} - {o} + 1) / 2)"


@dataclass(frozen=True)
class _Shape:
    """What the two images' declarations say about a table (same columns and key)."""

    affinities: dict[str, Affinities]
    rowid_alias: frozenset[str]
    """The INTEGER PRIMARY KEY when it is the rowid in both images: always an integer and
    equal within a pair by the join itself, so never compared."""
    same_ddl: bool
    """Both images declare the table alike, so keys compare the same way on both sides
    and the pairing on keys is one to one."""

    @classmethod
    def read(cls, conn: sqlite3.Connection, table: TableSchema) -> _Shape:
        """The shape, memoized on both CREATE statements, which determine it.

        A campaign diffs the same template's tables on every run.
        """
        found = conn.execute(
            "SELECT sql FROM init.sqlite_master WHERE type = 'table' AND name = ?", (table.name,)
        ).fetchone()
        key = (table.name, table.columns, None if found is None else found[0], table.sql)
        shape = _SHAPES.get(key)
        if shape is None:
            initial, final = (_declared(conn, db, table) for db in ("init", "main"))
            affinities = {c: (initial.get(c), final.get(c)) for c in table.columns}
            aliased = all(_is_rowid_alias(conn, db, table) for db in ("init", "main"))
            alias = frozenset(table.primary_key if aliased else ())
            shape = cls(affinities, alias, key[2] == key[3])
            if len(_SHAPES) >= _SHAPES_LIMIT:
                _SHAPES.clear()
            _SHAPES[key] = shape
        return shape


_SHAPES: dict[tuple[str, tuple[str, ...], str | None, str], _Shape] = {}
_SHAPES_LIMIT = 1024


def _declared(conn: sqlite3.Connection, database: str, table: TableSchema) -> dict[str, str | None]:
    """Each column's affinity in `database`; None in a virtual table (its module types it)."""
    found = conn.execute(
        "SELECT type FROM pragma_table_list WHERE schema = ? AND name = ?", (database, table.name)
    ).fetchone()
    virtual = found is None or found[0] != "table"
    info = conn.execute(f"PRAGMA {database}.table_info({quote(table.name)})").fetchall()
    return {row[1]: None if virtual else affinity(row[2]) for row in info}


def _is_rowid_alias(conn: sqlite3.Connection, database: str, table: TableSchema) -> bool:
    """Whether the one-column primary key is the rowid itself.

    Every declared key of a rowid table gets an index of its own (origin 'pk') unless it
    is an INTEGER PRIMARY KEY, which is the rowid (`INTEGER PRIMARY KEY DESC` is not).
    """
    if not table.has_rowid or table.keyed_by_rowid or len(table.primary_key) != 1:
        return False
    indexes = conn.execute(f"PRAGMA {database}.index_list({quote(table.name)})").fetchall()
    return all(row[3] != "pk" for row in indexes)


@dataclass(frozen=True)
class _Pairing:
    """How rows of the two images are matched, as SQL over a row's alias and its partner's."""

    names: tuple[str, ...]
    """The key's names in a `RowChange`."""
    key: Callable[[str], str]
    """Alias -> the key's values, in key order."""
    on: Callable[[str, str], str]
    """(alias, partner) -> the join condition: each key column equal under the row's own
    collation (so its index is used) and under BINARY (so 'a' never pairs with 'A')."""
    covers: Callable[[str], str]
    """Alias -> true for the rows this pairing is responsible for."""
    absent: Callable[[str], str]
    """Partner alias -> true when the row found no partner."""
    never_null: bool
    """No key holds a NULL."""


def _columns(alias: str, names: Sequence[str]) -> str:
    return ", ".join(f"{alias}.{quote(c)}" for c in names)


def _null_key(alias: str, key: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f"{alias}.{quote(c)} IS NULL" for c in key) + ")"


def declares_collation(table: TableSchema) -> bool:
    """Whether the table's CREATE text names a collation anywhere.

    If not, every column is BINARY: SQLite takes a column's collation only from its
    declaration.
    """
    return "COLLATE" in table.sql.upper()


def _by_key(table: TableSchema, nullable: bool, binary: bool) -> _Pairing:
    """Rows paired on their primary key; rows whose key holds a NULL are left out.

    `binary`: both images declare the table alike with no COLLATE, so comparing under
    the columns' own collation already compares byte for byte (the second, BINARY
    comparison a NOCASE key needs would cost about 15% of a large diff for nothing).
    """
    pk = table.primary_key
    exact = "" if binary else " AND {a}.{c} IS {p}.{c} COLLATE BINARY"
    return _Pairing(
        names=pk,
        key=lambda alias: _columns(alias, pk),
        on=lambda alias, partner: " AND ".join(
            f"{alias}.{quote(c)} IS {partner}.{quote(c)}"
            + exact.format(a=alias, c=quote(c), p=partner)
            for c in pk
        ),
        covers=lambda alias: f"NOT {_null_key(alias, pk)}" if nullable else "1",
        # A partner's first key column equals the row's own, which is not NULL.
        absent=lambda partner: f"{partner}.{quote(pk[0])} IS NULL",
        never_null=not nullable,
    )


def _by_rowid_of_null_keys(table: TableSchema) -> _Pairing:
    """Rows whose primary key holds a NULL (a rowid table allows it), paired on rowid."""
    pk = table.primary_key
    return _Pairing(
        names=("rowid",),
        key=lambda alias: f"{alias}.rowid",
        on=lambda alias, partner: f"{alias}.rowid = {partner}.rowid AND {_null_key(partner, pk)}",
        covers=lambda alias: _null_key(alias, pk),
        absent=lambda partner: f"{partner}.rowid IS NULL",
        never_null=False,
    )


def _paired(
    conn: sqlite3.Connection, table: TableSchema, same: str, pairing: _Pairing, counted: bool
) -> Iterator[Pair]:
    """The pairing's changed and added rows, then its removed ones.

    `counted`: the pairing is one to one, so row counts may prove that nothing was removed.
    """
    name, columns, names = quote(table.name), table.columns, pairing.names
    width = len(names)
    flag, start = width + len(columns), width + len(columns) + 1  # the absent flag, then `o`
    changed = (
        f"SELECT {pairing.key('k')}, {_columns('k', columns)}, {pairing.absent('o')}, "
        f"{_columns('o', columns)} FROM main.{name} AS k LEFT JOIN init.{name} AS o "
        f"ON {pairing.on('k', 'o')} "
        f"WHERE {pairing.covers('k')} AND ({pairing.absent('o')} OR NOT ({same}))"
    )
    added = 0
    for row in conn.execute(changed):
        after = dict(zip(columns, row[width:flag], strict=True))
        if row[flag]:
            added += 1
            yield tuple(zip(names, row[:width], strict=True)), None, after
        else:
            yield (
                tuple(zip(names, row[:width], strict=True)),
                dict(zip(columns, row[start:], strict=True)),
                after,
            )
    if counted and pairing.never_null and _nothing_removed(conn, name, added):
        return
    removed = (
        f"SELECT {pairing.key('o')}, {_columns('o', columns)} FROM init.{name} AS o "
        f"LEFT JOIN main.{name} AS k ON {pairing.on('o', 'k')} "
        f"WHERE {pairing.covers('o')} AND {pairing.absent('k')}"
    )
    for row in conn.execute(removed):
        yield (
            tuple(zip(names, row[:width], strict=True)),
            dict(zip(columns, row[width:], strict=True)),
            None,
        )


def _nothing_removed(conn: sqlite3.Connection, name: str, added: int) -> bool:
    """Whether every initial row has a final partner, from row counts alone.

    With a one-to-one pairing, `final - added` final rows have a partner, so
    `initial - (final - added)` initial rows have none; a count reads pages, not records.
    """
    initial, final = conn.execute(
        f"SELECT (SELECT count(*) FROM init.{name}), (SELECT count(*) FROM main.{name})"
    ).fetchone()
    return bool(initial == final - added)
