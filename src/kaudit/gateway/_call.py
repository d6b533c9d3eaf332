"""A tool call as the gateway's layers see it, and the layer interface."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kaudit.tools import Tool, ToolResult


def argument_bytes(raw: dict[str, Any] | str) -> int:
    """Size of the arguments as sent: UTF-8 bytes of the string, or of its JSON encoding."""
    text = raw if isinstance(raw, str) else json.dumps(raw, default=str, ensure_ascii=False)
    return len(text.encode())


@dataclass(frozen=True)
class GatewayCall:
    """One call on its way to a tool.

    `raw` is the arguments exactly as the agent sent them; `arguments` the parsed object,
    and `tool` the resolved tool, both None when `problem` says why the call cannot run
    (unknown tool, arguments that are not a JSON object, arguments over the size cap).
    """

    index: int
    id: str
    name: str
    raw: dict[str, Any] | str
    tool: Tool | None = None
    arguments: dict[str, Any] | None = None
    problem: str | None = None

    @functools.cached_property
    def raw_bytes(self) -> int:
        """`argument_bytes` of `raw`, encoded once for the layers that cap and record it."""
        return argument_bytes(self.raw)

    @property
    def ready(self) -> bool:
        """Whether the call reaches a tool (known tool, valid argument object)."""
        return self.problem is None and self.tool is not None and self.arguments is not None

    @property
    def writes(self) -> bool:
        """Whether the call can change state (a ready call of a non-read tool)."""
        return self.ready and self.tool is not None and self.tool.tag != "read"


Forward = Callable[[GatewayCall], ToolResult]
"""The rest of the chain below a layer."""


class Layer(Protocol):
    """One concern of the gateway: it sees the call, may forward it (or not, or twice)."""

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        """The result the layer above gets for `call`."""
        ...
