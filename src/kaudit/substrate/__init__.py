"""Resettable worlds: the substrate protocol, the SQLite substrate and dumps.

PostgreSQL has its own package (`kaudit.postgres`) and tools theirs (`kaudit.tools`);
their names are still found here for one release, with a `DeprecationWarning`.
"""

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from kaudit.substrate._choice import Blueprint, SubstrateFactory
from kaudit.substrate._db import SqliteDb
from kaudit.substrate._dump import Dump, StateDump
from kaudit.substrate._frozen import FrozenState
from kaudit.substrate._gate import StatementGate
from kaudit.substrate._handover import HandableSandbox, HandedDatabase
from kaudit.substrate._protocol import (
    Denial,
    Guard,
    GuardedSandbox,
    Sandbox,
    ServerSandbox,
    Substrate,
)
from kaudit.substrate._schema import ForeignKey, Schema, affinity, quote, read_schema
from kaudit.substrate._sqlite import SqliteSubstrate, cached_image
from kaudit.substrate._sqlite_guard import SqliteGuard
from kaudit.tools import DatabaseError, Db

__all__ = [
    "Blueprint",
    "DatabaseError",
    "Db",
    "Denial",
    "Dump",
    "ForeignKey",
    "FrozenState",
    "Guard",
    "GuardedSandbox",
    "HandableSandbox",
    "HandedDatabase",
    "Sandbox",
    "Schema",
    "ServerSandbox",
    "SqliteDb",
    "SqliteGuard",
    "SqliteSubstrate",
    "StateDump",
    "StatementGate",
    "Substrate",
    "SubstrateFactory",
    "affinity",
    "cached_image",
    "quote",
    "read_schema",
]

_MOVED = {
    **dict.fromkeys(
        (
            "TOOL_TAGS",
            "Blocked",
            "BoundaryViolation",
            "Tool",
            "ToolContext",
            "ToolError",
            "ToolResult",
            "ToolTag",
            "tool",
        ),
        "kaudit.tools",
    ),
    **dict.fromkeys(("Pruned", "postgres_world_image", "prune_postgres"), "kaudit.postgres"),
}
"""Names that left this package, and where they went. Remove after one release."""

if TYPE_CHECKING:
    from kaudit.tools import TOOL_TAGS as TOOL_TAGS
    from kaudit.tools import Blocked as Blocked
    from kaudit.tools import BoundaryViolation as BoundaryViolation
    from kaudit.tools import Tool as Tool
    from kaudit.tools import ToolContext as ToolContext
    from kaudit.tools import ToolError as ToolError
    from kaudit.tools import ToolResult as ToolResult
    from kaudit.tools import ToolTag as ToolTag
    from kaudit.tools import tool as tool


def __getattr__(name: str) -> Any:
    """A moved name, from its new package, imported lazily.

    `kaudit.postgres` imports this package, so naming it here, even for the type
    checker only, would close an import cycle.
    """
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"kaudit.substrate.{name} moved: import it from {home}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(home), name)
