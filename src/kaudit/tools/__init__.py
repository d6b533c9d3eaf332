"""Tools: the typed functions a world offers the agent, and what a call returns.

A world declares its tools here (`@tool`); substrates carry them and the gateway
calls them, so this room sits above `kaudit.substrate` (a tool receives its `Db`).
"""

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
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolTag",
    "tool",
]
