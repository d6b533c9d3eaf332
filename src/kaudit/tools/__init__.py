"""Tools: the typed functions a world offers the agent, and what a call returns.

A world declares its tools here (`@tool`); substrates carry them and the gateway
calls them. A tool receives a `Db`, whose protocol is defined here too, so this room
sits below `kaudit.substrate`: a substrate's blueprint names its tools and provides
their `Db`, and nothing here imports a substrate.
"""

from kaudit.tools._db import DatabaseError, Db
from kaudit.tools._tool import (
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
    "TOOL_TAGS",
    "Blocked",
    "BoundaryViolation",
    "DatabaseError",
    "Db",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolTag",
    "tool",
]
