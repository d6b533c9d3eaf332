"""Distractor variants: the same task with more look-alike rows around its targets.

Near-duplicates are what made published agents act on the wrong record, so a task
that passes validation should still pass when the world holds ten more records that
look like its target. A variant clones the declared row with fresh keys (following
the column's own numbering, e.g. CHG0000002 -> CHG0000913) and near-duplicate text, adds
the clones to the initial state, and must still validate: the oracle PASSes and every
counterexample keeps its declared verdict.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from kaudit.errors import SuiteError
from kaudit.spec import Distractor, Task
from kaudit.spec._task import VARIANT_MARK, ExtraRows
from kaudit.substrate import Substrate, quote
from kaudit.substrate._sqlite import build_image

VARIANT_SUFFIX = VARIANT_MARK + "distractors"
_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_LOOKALIKES = (
    "{} ",
    "{}.",
    "{} (EU)",
    "{} - old",
    "{} v2",
    "{} (archived)",
    "{}s",
    "Re: {}",
)


def lookalike(text: str, i: int) -> str:
    """The i-th near-duplicate of `text` (case, punctuation, suffixes), never equal to it."""
    forms = (text.title(), text.lower(), text.upper(), *(f.format(text) for f in _LOOKALIKES))
    candidates = [form for form in forms if form != text]
    return candidates[i % len(candidates)] + ("" if i < len(candidates) else f" #{i}")


def clone_rows(image: bytes, task: Task) -> tuple[ExtraRows, ...]:
    """The look-alike rows each of the task's distractor declarations asks for.

    Each clone is inserted into a scratch copy of `image` as soon as it is made, with
    foreign keys enforced, so later clones (and later declarations on the same table)
    number past it and a clone the world cannot hold fails here, naming the task.
    """
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        return tuple(_clones(conn, task.id, spec) for spec in task.distractors)
    finally:
        conn.close()


def _clones(conn: sqlite3.Connection, task_id: str, spec: Distractor) -> ExtraRows:
    source = _source_row(conn, task_id, spec)
    fresh = _fresh_columns(conn, task_id, spec)
    rows = []
    for i in range(spec.count):
        row = dict(source)
        for column in spec.vary:
            if source[column] is not None:
                row[column] = lookalike(str(source[column]), i)
        for column, scope in fresh.items():
            within = {c: source[c] for c in scope}
            row[column] = _fresh(conn, spec.table, column, source[column], within)
        _insert(conn, task_id, spec.table, row)
        rows.append(row)
    return ExtraRows(table=spec.table, rows=tuple(rows))


def _source_row(conn: sqlite3.Connection, task_id: str, spec: Distractor) -> dict[str, Any]:
    columns = {r[1] for r in conn.execute(f"PRAGMA table_info({quote(spec.table)})")}
    if not columns:
        raise SuiteError(f"task {task_id}: distractor table {spec.table!r} does not exist")
    unknown = sorted((set(spec.like) | set(spec.vary)) - columns)
    if unknown:
        raise SuiteError(f"task {task_id}: distractor columns {unknown} are not in {spec.table}")
    where = " AND ".join(f"{quote(c)} = ?" for c in spec.like)
    found = conn.execute(
        f"SELECT * FROM {quote(spec.table)} WHERE {where}", tuple(spec.like.values())
    ).fetchall()
    if len(found) != 1:
        raise SuiteError(
            f"task {task_id}: distractor 'like' matches {len(found)} rows of {spec.table}, not 1"
        )
    return dict(found[0])


def _keys(conn: sqlite3.Connection, table: str) -> list[tuple[str, ...]]:
    """The primary key and every UNIQUE constraint of `table`, shortest first."""
    info = conn.execute(f"PRAGMA table_info({quote(table)})").fetchall()
    primary = tuple(r[1] for r in sorted(info, key=lambda r: r[5]) if r[5])
    keys = [primary] if primary else []
    for index in conn.execute(f"PRAGMA index_list({quote(table)})").fetchall():
        if index[2]:  # unique
            columns = tuple(r[2] for r in conn.execute(f"PRAGMA index_info({quote(index[1])})"))
            if None not in columns and columns not in keys:  # None: an expression index
                keys.append(columns)
    return sorted(keys, key=len)


def _fresh_columns(
    conn: sqlite3.Connection, task_id: str, spec: Distractor
) -> dict[str, tuple[str, ...]]:
    """Columns each clone needs a new value in, each with the key columns it is unique within.

    One column per key is enough to keep a clone distinct. Columns that refer to another
    table keep their value, since a fresh one would point at nothing: for a composite key
    such as (invoice_id, line_no) the clone stays on the same invoice with a new line_no.
    Single-column keys come first, so a column fresh across the whole table also settles
    every composite key it is part of.
    """
    references = {r[3] for r in conn.execute(f"PRAGMA foreign_key_list({quote(spec.table)})")}
    chosen: dict[str, tuple[str, ...]] = {}
    for key in _keys(conn, spec.table):
        if set(key) & (set(spec.vary) | set(chosen)):
            continue  # a varied or already fresh column keeps this key distinct
        own = [column for column in key if column not in references]
        if not own:
            raise SuiteError(
                f"task {task_id}: cannot clone a row of {spec.table}: every column of its "
                f"key ({', '.join(key)}) refers to another table; vary one of them or "
                "clone the row it refers to"
            )
        chosen[own[-1]] = tuple(column for column in key if column != own[-1])
    return chosen


def _fresh(
    conn: sqlite3.Connection, table: str, column: str, value: Any, scope: dict[str, Any]
) -> Any:
    """A value for `column` past every existing one of the same pattern among rows in `scope`."""
    if value is None:
        return None  # NULLs never collide in a UNIQUE column
    within = "".join(f" AND {quote(c)} IS ?" for c in scope)
    params = tuple(scope.values())
    if isinstance(value, int):
        top = conn.execute(
            f"SELECT MAX({quote(column)}) FROM {quote(table)} WHERE 1{within}", params
        ).fetchone()[0]
        return int(top) + 1
    match = _NUMBERED.match(str(value))
    prefix = match.group(1) if match else f"{value}-D"
    rows = conn.execute(
        f"SELECT {quote(column)} FROM {quote(table)} "
        f"WHERE {quote(column)} LIKE ? ESCAPE '\\'{within}",
        (_escape_like(prefix) + "%", *params),
    ).fetchall()
    numbers = [
        int(m.group(2)) for (v,) in rows if (m := _NUMBERED.match(str(v))) and m.group(1) == prefix
    ]
    if match is None:
        return f"{prefix}{max(numbers, default=0) + 1:02d}"
    digits = match.group(2)
    return f"{prefix}{max(numbers, default=int(digits)) + 1:0{len(digits)}d}"


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _insert_row(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    columns = ", ".join(quote(c) for c in row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO {quote(table)} ({columns}) VALUES ({marks})", tuple(row.values()))


def _insert(conn: sqlite3.Connection, task_id: str, table: str, row: dict[str, Any]) -> None:
    try:
        _insert_row(conn, table, row)
    except sqlite3.Error as exc:
        raise SuiteError(
            f"task {task_id}: a distractor clone cannot be added to {table}: {exc}"
        ) from None


def distractor_variant(task: Task, substrate: Substrate) -> Task:
    """The task with its distractor rows added to the initial state, id suffixed."""
    if not task.distractors:
        raise SuiteError(f"task {task.id} declares no distractors")
    # Clone from the world the task really starts in, so a clone's fresh keys also
    # skip past any extra rows the task already adds.
    start = with_extra_rows(substrate, task.extra_rows) if task.extra_rows else substrate
    rows = clone_rows(start.template.image, task)
    return task.model_copy(
        update={
            "id": task.id + VARIANT_SUFFIX,
            "extra_rows": task.extra_rows + rows,
            "distractors": (),
        }
    )


def with_extra_rows(base: Substrate, extra: tuple[ExtraRows, ...]) -> Substrate:
    """A substrate like `base` (same kind, tools, server) whose template adds `extra` rows.

    The rows are added to the SQLite template image (change log left empty), which is
    the canonical seeded state every substrate kind builds from.
    """

    def build(conn: sqlite3.Connection) -> None:
        conn.deserialize(base.template.image)  # build_image then empties the change log
        for block in extra:
            for row in block.rows:
                _insert_row(conn, block.table, row)

    try:
        image = build_image(build)
    except sqlite3.Error as exc:
        raise SuiteError(f"extra rows cannot be added to {base.name}: {exc}") from None
    return base.derive(image)
