"""The foreign keys a world declares for a schema without them, checked against it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from kaudit.errors import SpecError, SuiteError
from kaudit.substrate import ForeignKey, read_schema


def ownership_problems(links: Sequence[ForeignKey], image: bytes) -> list[tuple[str, str]]:
    """(field, reason) of each declared link naming a table or column the image lacks.

    A link that named nothing real would leave its child table outside every scope, the
    very hole the declaration is there to close, so it is an error and not ignored.
    """
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)
        schema = read_schema(conn)
    finally:
        conn.close()
    problems: list[tuple[str, str]] = []
    for i, link in enumerate(links):
        for field, table, columns in (
            ("table", link.child, link.child_columns),
            ("parent", link.parent, link.parent_columns),
        ):
            found = schema.tables.get(table)
            if found is None:
                problems.append((f"ownership[{i}].{field}", f"no table {table} in the world"))
                continue
            named = "columns" if field == "table" else "parent_columns"
            for column in columns:
                if column not in found.columns:
                    reason = f"no column {column} in table {table}"
                    problems.append((f"ownership[{i}].{named}", reason))
        parent = schema.tables.get(link.parent)
        width = len(link.parent_columns or (parent.primary_key if parent else ()))
        if parent is not None and width != len(link.child_columns):
            reason = f"{len(link.child_columns)} columns reference {width} of {link.parent}"
            problems.append((f"ownership[{i}].columns", reason))
    return problems


def check_ownership(
    world: str, links: Sequence[ForeignKey], image: bytes, source: Path | None = None
) -> None:
    """Raise for the first declared link the world's schema cannot serve.

    `source` is the file the links were read from (a world directory's `world.yaml`);
    without one the error names the world.
    """
    if not links:
        return
    problems = ownership_problems(links, image)
    if not problems:
        return
    field, reason = problems[0]
    if source is not None:
        raise SpecError(source, field, reason)
    raise SuiteError(f"world {world}: {field}: {reason}")
