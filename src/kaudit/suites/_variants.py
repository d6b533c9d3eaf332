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
from kaudit.spec import ExtraRows, Task
from kaudit.substrate import SqliteSubstrate, Substrate, build_image, quote

VARIANT_SUFFIX = "~distractors"
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


def _unique_columns(conn: sqlite3.Connection, table: str, key: tuple[str, ...]) -> set[str]:
    columns = set(key)
    for index in conn.execute(f"PRAGMA index_list({quote(table)})").fetchall():
        if index[2]:  # unique
            info = conn.execute(f"PRAGMA index_info({quote(index[1])})").fetchall()
            if len(info) == 1:
                columns.add(info[0][2])
    return columns


def _fresh(conn: sqlite3.Connection, table: str, column: str, value: Any, i: int) -> Any:
    """A new value for a key/unique column past every existing one of the same pattern."""
    if isinstance(value, int):
        top = conn.execute(f"SELECT MAX({quote(column)}) FROM {quote(table)}").fetchone()[0]
        return int(top) + 1 + i
    match = _NUMBERED.match(str(value))
    if match is None:
        return f"{value}-D{i + 1:02d}"
    prefix, digits = match.groups()
    rows = conn.execute(
        f"SELECT {quote(column)} FROM {quote(table)} WHERE {quote(column)} LIKE ? ESCAPE '\\'",
        (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
    ).fetchall()
    numbers = [
        int(m.group(2)) for (v,) in rows if (m := _NUMBERED.match(str(v))) and m.group(1) == prefix
    ]
    top = max(numbers, default=int(digits))
    return f"{prefix}{top + 1 + i:0{len(digits)}d}"


def clone_rows(image: bytes, task: Task) -> tuple[ExtraRows, ...]:
    """The look-alike rows each of the task's distractor declarations asks for."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    conn.row_factory = sqlite3.Row
    try:
        out: list[ExtraRows] = []
        for spec in task.distractors:
            where = " AND ".join(f"{quote(c)} = ?" for c in spec.like)
            found = conn.execute(
                f"SELECT * FROM {quote(spec.table)} WHERE {where}", tuple(spec.like.values())
            ).fetchall()
            if len(found) != 1:
                raise SuiteError(
                    f"task {task.id}: distractor 'like' matches {len(found)} rows "
                    f"of {spec.table}, not 1"
                )
            source = dict(found[0])
            unique = _unique_columns(conn, spec.table, tuple(spec.like)) - set(spec.vary)
            rows = []
            for i in range(spec.count):
                row = dict(source)
                for column in unique:
                    row[column] = _fresh(conn, spec.table, column, source[column], i)
                for column in spec.vary:
                    row[column] = lookalike(str(source[column]), i)
                rows.append(row)
            out.append(ExtraRows(table=spec.table, rows=tuple(rows)))
        return tuple(out)
    finally:
        conn.close()


def distractor_variant(task: Task, substrate: Substrate) -> Task:
    """The task with its distractor rows added to the initial state, id suffixed."""
    if not task.distractors:
        raise SuiteError(f"task {task.id} declares no distractors")
    if not isinstance(substrate, SqliteSubstrate):
        raise SuiteError(f"task {task.id}: distractor variants need a SQLite substrate")
    rows = clone_rows(substrate.template.image, task)
    return task.model_copy(
        update={
            "id": task.id + VARIANT_SUFFIX,
            "extra_rows": task.extra_rows + rows,
            "distractors": (),
        }
    )


def with_extra_rows(base: SqliteSubstrate, extra: tuple[ExtraRows, ...]) -> SqliteSubstrate:
    """A substrate whose template is `base`'s plus `extra` rows, change log left empty."""

    def build(conn: sqlite3.Connection) -> None:
        conn.deserialize(base.template.image)
        conn.execute("DROP TABLE IF EXISTS _kaudit_changes")
        for name in [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                "AND name LIKE '\\_kaudit\\_%' ESCAPE '\\'"
            )
        ]:
            conn.execute(f"DROP TRIGGER {quote(name)}")
        for block in extra:
            for row in block.rows:
                columns = ", ".join(quote(c) for c in row)
                marks = ", ".join("?" for _ in row)
                conn.execute(
                    f"INSERT INTO {quote(block.table)} ({columns}) VALUES ({marks})",
                    tuple(row.values()),
                )

    try:
        image = build_image(build)
    except sqlite3.Error as exc:
        raise SuiteError(f"extra rows cannot be added to {base.name}: {exc}") from None
    return SqliteSubstrate(base.name, image, base.tools, base.volatile)
