"""Resettable worlds: the substrate protocol, the SQLite substrate, tools and dumps."""

from kaudit.substrate._capture import (
    CHANGE_LOG,
    capture_fingerprint,
    has_change_capture,
    install_change_capture,
    key_width,
)
from kaudit.substrate._choice import (
    DEFAULT_SUBSTRATE,
    SUBSTRATES,
    Blueprint,
    SubstrateFactory,
    open_substrate,
    substrate_scheme,
)
from kaudit.substrate._db import DatabaseError, Db, SqliteDb
from kaudit.substrate._dump import Dump, StateDump
from kaudit.substrate._frozen import FILE_FUNCTIONS, FrozenState, ReadOnlyGuard
from kaudit.substrate._pool import register_function
from kaudit.substrate._postgres_entry import Pruned, postgres_world_image, prune_postgres
from kaudit.substrate._protocol import Sandbox, ServerSandbox, Substrate
from kaudit.substrate._schema import (
    INTERNAL_PREFIX,
    ForeignKey,
    Schema,
    TableSchema,
    quote,
    read_schema,
)
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
    "DEFAULT_SUBSTRATE",
    "FILE_FUNCTIONS",
    "INTERNAL_PREFIX",
    "SUBSTRATES",
    "TOOL_TAGS",
    "Blocked",
    "Blueprint",
    "BoundaryViolation",
    "DatabaseError",
    "Db",
    "Dump",
    "ForeignKey",
    "FrozenState",
    "Pruned",
    "ReadOnlyGuard",
    "Sandbox",
    "Schema",
    "ServerSandbox",
    "SqliteDb",
    "SqliteSandbox",
    "SqliteSubstrate",
    "StateDump",
    "Substrate",
    "SubstrateFactory",
    "TableSchema",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolTag",
    "build_image",
    "cache_dir",
    "cached_image",
    "capture_fingerprint",
    "has_change_capture",
    "install_change_capture",
    "key_width",
    "open_substrate",
    "postgres_world_image",
    "prune_postgres",
    "quote",
    "read_schema",
    "register_function",
    "substrate_scheme",
    "tool",
]
