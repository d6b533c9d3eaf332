"""The size cap on tool arguments, and the recording layer that honours it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kaudit.gateway._call import Forward, GatewayCall
from kaudit.tools import ToolResult

MAX_ARGUMENT_BYTES = 64 * 1024
"""Arguments larger than this are refused and never copied into a record."""


class LimitsLayer:
    """Refuses a call whose arguments exceed `max_bytes`, before any tool sees them.

    A model can emit megabytes of arguments (a pasted table, a runaway loop); running
    them costs the sandbox and echoing them bloats every ledger that keeps the run.
    """

    def __init__(self, max_bytes: int = MAX_ARGUMENT_BYTES) -> None:
        self.max_bytes = max_bytes

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        """Forward the call, or fail it when its arguments are too large."""
        size = call.raw_bytes
        if size > self.max_bytes:
            problem = f"arguments are {size} bytes; the limit is {self.max_bytes}"
            return forward(replace(call, tool=None, arguments=None, problem=problem))
        return forward(call)


class RecordingLayer:
    """Keeps every call with its arguments, result and tag, in call order.

    Arguments over `max_bytes` are recorded as their size only, so the cap that stops
    them reaching a tool also keeps them out of the ledger.
    """

    def __init__(self, max_bytes: int = MAX_ARGUMENT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.calls: list[dict[str, Any]] = []

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        """Forward the call and record it with what came back."""
        result = forward(call)
        size = call.raw_bytes
        arguments = call.raw if size <= self.max_bytes else {"omitted_bytes": size}
        self.calls.append(
            {
                "id": call.id,
                "name": call.name,
                "arguments": arguments,
                "result": result.to_json(),
                "tag": call.tool.tag if call.tool is not None else None,
            }
        )
        return result
