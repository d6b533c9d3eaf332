"""The database handle tools write through: parameterized SQL and one transaction helper.

The protocol lives with the tools that use it, below every substrate that provides
one (`kaudit.substrate.SqliteDb`, the PostgreSQL substrate's), so a tool module needs
nothing from the substrates and a substrate's blueprint can name its tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


class DatabaseError(Exception):
    """A statement the database refused (constraint, type, syntax), on any substrate.

    Every `Db` raises this instead of its driver's own error (`sqlite3.Error`,
    `psycopg.Error`), so a tool written once catches one exception on every substrate;
    `integrity` tells a broken key or constraint apart from everything else.
    """

    def __init__(self, message: str, *, integrity: bool = False) -> None:
        self.integrity = integrity
        super().__init__(message)


@runtime_checkable
class Db(Protocol):
    """What a tool may do to its sandbox. SQL uses `?` placeholders on every substrate.

    A statement the database refuses raises `DatabaseError`, never a driver's error.
    """

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts in column order."""
        ...

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of a SELECT, or None."""
        ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a write inside the current transaction; returns the affected row count."""
        ...

    def atomic(self) -> Any:
        """Context manager: everything inside commits together or not at all."""
        ...
