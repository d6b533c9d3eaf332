"""Resettable worlds: the substrate protocol, the SQLite substrate, tools and dumps."""

from kaudit.substrate._capture import CHANGE_LOG, has_change_capture, install_change_capture
from kaudit.substrate._db import Db, SqliteDb
from kaudit.substrate._dump import StateDump
from kaudit.substrate._protocol import Sandbox, Substrate
from kaudit.substrate._schema import INTERNAL_PREFIX, Schema, TableSchema, quote, read_schema
from kaudit.substrate._sqlite import (
    SqliteSandbox,
    SqliteSubstrate,
    build_image,
    cache_dir,
    cached_image,
)
from kaudit.substrate._tool import (
    TOOL_TAGS,
    Blocked,
    BoundaryViolation,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    ToolTag,
    tool,
)

__all__ = [
    "CHANGE_LOG",
    "INTERNAL_PREFIX",
    "TOOL_TAGS",
    "Blocked",
    "BoundaryViolation",
    "Db",
    "Sandbox",
    "Schema",
    "SqliteDb",
    "SqliteSandbox",
    "SqliteSubstrate",
    "StateDump",
    "Substrate",
    "TableSchema",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolTag",
    "build_image",
    "cache_dir",
    "cached_image",
    "has_change_capture",
    "install_change_capture",
    "quote",
    "read_schema",
    "tool",
]
