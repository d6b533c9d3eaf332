"""Primary-key row diff of two SQLite state images, computed inside the engine.

Rows stay in SQLite: the full path's joins return only the rows that differ, with
both sides' values (`_full_diff`); the fast path reads the change log the template's
triggers filled and visits only touched rows. Both return the same changes (proved
by property tests); the fast path is used only when its preconditions hold.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

from kaudit.label._full_diff import declares_collation, differing_rows
from kaudit.label._types import Row, RowChange
from kaudit.label._values import Value, same_value
from kaudit.substrate import Schema, quote, read_schema
from kaudit.substrate._capture import CHANGE_LOG, has_change_capture, key_width
from kaudit.substrate._schema import TableSchema

Volatile = Mapping[str, Collection[str]]


Side = tuple[sqlite3.Connection, str]
"""A state to read rows from: a connection and the schema name the state has in it."""

_LOCAL = threading.local()
_CACHED_INITIALS = 4


@dataclass(frozen=True)
class _Initial:
    """A read-only connection over an initial image, and what the fast path asks of it."""

    conn: sqlite3.Connection
    schema: Schema
    captured: bool
    log_empty: bool
    cookie: int
    width: int
    """The change log's key columns (0 without change capture)."""


def _initial(initial: bytes) -> _Initial:
    """The initial image opened once per thread and template, with its facts read once.

    Every run of a campaign starts from the same template bytes object; parsing its
    schema (and reading its schema, change log and cookie) once per thread instead of
    once per run is most of the labeler's time on a large world. The cache is keyed by
    the bytes themselves (their hash is computed once per bytes object), so a different
    image can never be served by mistake; the connection is read-only, so the facts
    cannot go stale.
    """
    if not hasattr(_LOCAL, "initials"):
        _LOCAL.initials = {}
    cache: dict[bytes, _Initial] = _LOCAL.initials
    found = cache.get(initial)
    if found is None:
        if len(cache) >= _CACHED_INITIALS:
            for old in cache.values():
                old.conn.close()
            cache.clear()
        conn = sqlite3.connect(":memory:")
        conn.deserialize(initial)
        conn.execute("PRAGMA query_only = ON")
        captured = has_change_capture(conn)
        empty = (
            not captured or conn.execute(f"SELECT 1 FROM {CHANGE_LOG} LIMIT 1").fetchone() is None
        )
        cookie = _schema_cookie(conn, "main")
        width = key_width(conn) if captured else 0
        found = _Initial(conn, read_schema(conn), captured, empty, cookie, width)
        cache[initial] = found
    return found


def _initial_connection(initial: bytes) -> sqlite3.Connection:
    """A read-only connection over `initial`, reused across runs of the same template."""
    return _initial(initial).conn


class ImagePair:
    """The final state opened as `main`, the initial one readable beside it.

    `final` is an image (copied into a private connection, closed with the pair) or a
    connection already holding the final state as `main` (the frozen sandbox: read in
    place, left open). The initial image is attached only when a join needs both (the
    full diff); the fast path reads it through the cached initial connection.
    """

    def __init__(self, initial: bytes, final: bytes | sqlite3.Connection) -> None:
        self._initial = initial
        self._owned = isinstance(final, bytes)
        if isinstance(final, bytes):
            self.conn = sqlite3.connect(":memory:")
            self.conn.deserialize(final)
        else:
            self.conn = final
        self._attached = False

    @property
    def initial(self) -> _Initial:
        """The cached initial connection and its facts (schema, change log, cookie)."""
        return _initial(self._initial)

    @property
    def before(self) -> Side:
        """Where initial rows are read: the attached copy if there is one, else the cache."""
        if self._attached:
            return (self.conn, "init")
        return (_initial_connection(self._initial), "main")

    @property
    def after(self) -> Side:
        """Where final rows are read."""
        return (self.conn, "main")

    def attach(self) -> sqlite3.Connection:
        """Attach the initial image as `init` for joins across both states."""
        if not self._attached:
            self.conn.execute("ATTACH ':memory:' AS init")
            self.conn.deserialize(self._initial, name="init")
            self._attached = True
        return self.conn

    def close(self) -> None:
        """Release the final image, or detach what the pair attached to a borrowed one."""
        if self._owned:
            self.conn.close()
        elif self._attached and not self.conn.in_transaction:
            self.conn.execute("DETACH init")
            self._attached = False
        # Inside a transaction (a pooled sandbox) SQLite keeps `init` locked; the
        # sandbox's release finds it attached and closes that connection instead.


@contextmanager
def opened(initial: bytes, final: bytes | sqlite3.Connection) -> Iterator[ImagePair]:
    """An `ImagePair` closed on exit."""
    pair = ImagePair(initial, final)
    try:
        yield pair
    finally:
        pair.close()


@dataclass(frozen=True)
class Diff:
    """The changes, and why the full diff was used when the fast path was asked for.

    `fallback` is None when the change log was used or not asked for; otherwise it says
    why the log could not be trusted (a table lost its triggers, a write ran without
    `recursive_triggers`, the initial state was not a pristine template).
    """

    changes: list[RowChange]
    fallback: str | None = None
    every_change: list[RowChange] | None = None
    """With `every=True`: the same changes with nothing masked (what the final state is)."""


def diff_images(
    initial: bytes, final: bytes, volatile: Volatile | None = None, *, fast: bool = True
) -> list[RowChange]:
    """Every row change from `initial` to `final`, volatile columns masked, sorted.

    `fast=False` forces the full diff (the reference the fast path is tested against).
    """
    with opened(initial, final) as pair:
        return diff_pair(pair, volatile, fast=fast).changes


def diff_pair(
    pair: ImagePair, volatile: Volatile | None = None, *, fast: bool = True, every: bool = False
) -> Diff:
    """`diff_images` over an opened pair of images, with the fallback reason if any.

    `every=True` also returns the changes with no column masked (`Diff.every_change`).
    The fast path always diffs unmasked and masks afterwards; the full path does so
    only when asked, and otherwise masks inside its SQL.
    """
    volatile = volatile or {}
    logged, fallback = _log_usable(pair) if fast else (False, None)
    if fast:
        before = pair.initial.schema  # read once per template and thread
    else:
        pair.attach()  # read the initial schema there too, not from a second copy
        before = read_schema(*pair.before)
    # The log is usable only where no DDL ran since the initial state (equal cookies):
    # the final schema is then the initial one, already read.
    after = before if logged else read_schema(*pair.after)
    changes: list[RowChange] = []
    if after is before:
        comparable = [after.tables[name] for name in sorted(after.tables)]
    else:
        comparable = []
        for name in sorted(set(before.tables) | set(after.tables)):
            old, new = before.tables.get(name), after.tables.get(name)
            if old is not None and new is not None and _same_shape(old, new):
                comparable.append(new)
            else:
                changes.extend(_schema_changes(pair, old, new))
    touched = None
    if logged:
        touched, fallback = _touched_keys(pair, after)
    if touched is None:
        conn = pair.attach()
        for table in comparable:
            mask = frozenset() if every else frozenset(volatile.get(table.name, ()))
            changes.extend(_full_table_diff(conn, table, mask))
    else:
        for table in comparable:
            if table.name in touched:
                changes.extend(_touched_diff(pair, table, frozenset(), touched[table.name]))
    ordered = sorted(changes, key=RowChange.sort_key)
    masked = [
        kept
        for change in ordered
        if (kept := _masked(change, volatile.get(change.table, ()))) is not None
    ]
    return Diff(masked, fallback, ordered if every else None)


def _masked(change: RowChange, mask: Collection[str]) -> RowChange | None:
    """`change` with volatile columns masked: None when only they changed."""
    if change.op != "modified" or not mask:
        return change
    changed = tuple(c for c in change.changed if c not in mask)
    if changed == change.changed:
        return change
    return replace(change, changed=changed) if changed else None


def _same_shape(old: TableSchema, new: TableSchema) -> bool:
    return (
        old.columns == new.columns
        and old.primary_key == new.primary_key
        and old.has_rowid == new.has_rowid
    )


Touched = dict[str, set[tuple[Value, ...] | int]]
"""Per table: logged keys (typed tuples), or rowids for rows whose key holds a NULL."""


def _log_usable(pair: ImagePair) -> tuple[bool, str | None]:
    """Whether the change log can be trusted for this pair, and why not if it cannot.

    No change capture at all is not a fallback worth reporting (the world has none).
    """
    initial, (final, final_db) = pair.initial, pair.after
    if not (initial.captured and has_change_capture(final, final_db)):
        return False, None
    if not initial.log_empty:
        return False, "the initial state's change log is not empty"
    if initial.cookie != _schema_cookie(final, final_db):
        # Equal triggers at the end prove nothing: one dropped and re-created with the
        # same text logged none of the writes made in between.
        return False, "DDL ran during the run: triggers or the change log may have missed writes"
    return True, None


def _touched_keys(pair: ImagePair, schema: Schema) -> tuple[Touched | None, str | None]:
    """Rows the change log saw (`_log_usable` said it can be trusted), or (None, why)."""
    final, final_db = pair.after
    keys = ", ".join(f"k{i}" for i in range(pair.initial.width))
    sql = f"SELECT DISTINCT tbl, rid, recursive, {keys} FROM {final_db}.{CHANGE_LOG}"
    touched: Touched = {}
    for table, rid, recursive, *key in final.execute(sql):
        if recursive == 0:  # NULL: the table cannot lose an unlogged row to a REPLACE
            return None, "a write ran without PRAGMA recursive_triggers"
        found = schema.tables.get(table)
        if found is None:
            continue  # the table is gone: its rows are a schema change
        parts = tuple(key[: len(found.primary_key)])
        touched.setdefault(table, set()).add(
            rid if found.has_rowid and any(v is None for v in parts) else parts
        )
    return touched, None


def _schema_cookie(conn: sqlite3.Connection, database: str) -> int:
    """SQLite's schema version, read from the image header.

    It changes only when DDL runs (the sandbox refuses `PRAGMA schema_version = N`), so
    an equal cookie means no trigger was dropped, and a changed one means the full diff.
    """
    return int(conn.execute(f"PRAGMA {database}.schema_version").fetchone()[0])


def _select(table: TableSchema, database: str) -> str:
    columns = ", ".join(quote(c) for c in table.columns)
    rowid = "rowid, " if table.keyed_by_rowid else ""
    return f"SELECT {rowid}{columns} FROM {database}.{quote(table.name)}"


def _where_key(table: TableSchema) -> str:
    """The row whose key is exactly the bound values, byte for byte.

    Each key column is compared under its own collation (so the key's index is used)
    and, when the table declares any collation, again under BINARY: under NOCASE, the
    key 'A' would also find the row 'a'.
    """
    exact = " AND {c} IS ?{i} COLLATE BINARY" if declares_collation(table) else ""
    return " AND ".join(
        f"{quote(c)} IS ?{i}" + exact.format(c=quote(c), i=i)
        for i, c in enumerate(table.primary_key, start=1)
    )


def _null_key(table: TableSchema, alias: str) -> str:
    """True for a row whose primary key holds a NULL (possible only in a rowid table)."""
    if not table.has_rowid or table.keyed_by_rowid:
        return "0"
    return "(" + " OR ".join(f"{alias}.{quote(c)} IS NULL" for c in table.primary_key) + ")"


def _row(table: TableSchema, row: tuple[Value, ...] | None) -> Row | None:
    if row is None:
        return None
    values = row[1:] if table.keyed_by_rowid else row
    return dict(zip(table.columns, values, strict=True))


def _fetch(side: Side, table: TableSchema, key: tuple[Value, ...]) -> Row | None:
    conn, database = side
    sql = f"{_select(table, database)} WHERE {_where_key(table)}"
    return _row(table, conn.execute(sql, key).fetchone())


def _fetch_null_key(side: Side, table: TableSchema, rid: int) -> Row | None:
    """The row at `rid` if its primary key holds a NULL: such rows are keyed by rowid."""
    conn, database = side
    name = f"{database}.{quote(table.name)}"
    sql = f"{_select(table, database)} WHERE rowid = ? AND {_null_key(table, name)}"
    return _row(table, conn.execute(sql, (rid,)).fetchone())


def _compare(
    table: TableSchema,
    named: tuple[tuple[str, Value], ...],
    before: Row | None,
    after: Row | None,
    mask: frozenset[str],
) -> RowChange | None:
    if before is None and after is None:
        return None
    if before is None:
        return RowChange(table.name, "added", named, None, after)
    if after is None:
        return RowChange(table.name, "removed", named, before, None)
    changed = tuple(
        c for c in table.columns if c not in mask and not same_value(before[c], after[c])
    )
    if not changed:
        return None
    return RowChange(table.name, "modified", named, before, after, changed)


def _by_key(
    before: Side, after: Side, table: TableSchema, key: tuple[Value, ...], mask: frozenset[str]
) -> RowChange | None:
    named = tuple(zip(table.primary_key, key, strict=True))
    return _compare(table, named, _fetch(before, table, key), _fetch(after, table, key), mask)


def _by_rowid(
    before: Side, after: Side, table: TableSchema, rid: int, mask: frozenset[str]
) -> RowChange | None:
    old, new = _fetch_null_key(before, table, rid), _fetch_null_key(after, table, rid)
    return _compare(table, (("rowid", rid),), old, new, mask)


def _touched_diff(
    pair: ImagePair, table: TableSchema, mask: frozenset[str], keys: set[tuple[Value, ...] | int]
) -> Iterator[RowChange]:
    before, after = pair.before, pair.after
    for key in keys:
        if isinstance(key, int):
            change = _by_rowid(before, after, table, key, mask)
        else:
            change = _by_key(before, after, table, key, mask)
        if change is not None:
            yield change


def _full_table_diff(
    conn: sqlite3.Connection, table: TableSchema, mask: frozenset[str]
) -> Iterator[RowChange]:
    for key, before, after in differing_rows(conn, table, mask):
        change = _compare(table, key, before, after, mask)
        if change is not None:
            yield change


def _schema_changes(
    pair: ImagePair, old: TableSchema | None, new: TableSchema | None
) -> Iterator[RowChange]:
    """A dropped, created or reshaped table: one schema change plus its rows as removed/added."""
    table = (old or new).name  # type: ignore[union-attr]
    yield RowChange(table, "schema", (), None, None)
    for schema, (conn, database), op in ((old, pair.before, "removed"), (new, pair.after, "added")):
        if schema is None:
            continue
        for row in conn.execute(_select(schema, database)).fetchall():
            values = row[1:] if schema.keyed_by_rowid else row
            record = dict(zip(schema.columns, values, strict=True))
            key_values = (
                row[:1] if schema.keyed_by_rowid else tuple(record[c] for c in schema.primary_key)
            )
            key = tuple(zip(schema.primary_key, key_values, strict=True))
            yield RowChange(
                table,
                op,  # type: ignore[arg-type]
                key,
                record if op == "removed" else None,
                record if op == "added" else None,
            )
