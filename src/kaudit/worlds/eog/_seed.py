"""Reading a seed file: SQLite-dialect INSERT statements, and nothing else.

The published seeds carry no schema; the tables and their columns are whatever the
INSERT statements name. Any other statement is refused, so a seed file can fill a
template but never reshape or drop one.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import SpecError

_HEADER = re.compile(
    r'^\s*INSERT\s+INTO\s+"?(\w+)"?\s*\(([^)]*)\)\s*VALUES\b', re.IGNORECASE | re.DOTALL
)


@dataclass(frozen=True)
class SeedStatement:
    """One INSERT statement, with the table and columns it names."""

    table: str
    columns: tuple[str, ...]
    sql: str


@dataclass(frozen=True)
class Seed:
    """A parsed seed file: its statements in file order and each table's columns."""

    path: Path
    statements: tuple[SeedStatement, ...]
    columns: dict[str, tuple[str, ...]]
    digest: str


def _without_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def _statements(text: str) -> list[str]:
    """Complete statements, split at each `;` where SQLite itself says a statement ends."""
    out: list[str] = []
    buffer = ""
    for piece in re.split(r"(?<=;)", text):
        buffer += piece
        if buffer.rstrip().endswith(";") and sqlite3.complete_statement(buffer):
            out.append(buffer)
            buffer = ""
    if _without_comments(buffer).strip():
        out.append(buffer)  # an unterminated tail is still checked (and refused) below
    return out


def read_seed(path: Path) -> Seed:
    """Parse `path`; a statement that is not `INSERT INTO t (cols) VALUES ...` is an error."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(path, "<file>", exc.strerror or str(exc)) from None
    statements: list[SeedStatement] = []
    columns: dict[str, list[str]] = {}
    for sql in _statements(raw.decode("utf-8")):
        body = _without_comments(sql)
        match = _HEADER.match(body)
        if match is None or not sqlite3.complete_statement(sql):
            raise SpecError(path, "<sql>", f"only INSERT statements are allowed: {body[:80]!r}")
        table = match.group(1)
        names = tuple(c.strip().strip('"') for c in match.group(2).split(","))
        known = columns.setdefault(table, [])
        known.extend(c for c in names if c not in known)
        statements.append(SeedStatement(table, names, sql))
    return Seed(
        path=path,
        statements=tuple(statements),
        columns={table: tuple(names) for table, names in columns.items()},
        digest=hashlib.sha256(raw).hexdigest(),
    )
