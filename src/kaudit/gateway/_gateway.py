"""The tool gateway: every tool call of a run passes through one chain of layers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any

from kaudit.gateway._call import Forward, GatewayCall, Layer
from kaudit.tools import Tool, ToolContext, ToolResult


class ToolGateway:
    """The run's tools behind `layers`, outermost first, over the sandbox context `ctx`.

    Whoever drives the run (kaudit's agent loop, an external agent over MCP) calls
    `call`; the layers record, cap, enforce the boundary and inject faults, and the
    innermost step runs the tool. Unknown tools and malformed arguments never raise:
    they come back as failed results, like any other tool error.
    """

    def __init__(
        self, tools: Mapping[str, Tool], ctx: ToolContext, layers: Sequence[Layer] = ()
    ) -> None:
        self.tools = dict(tools)
        self.ctx = ctx
        self._calls = 0
        innermost: Forward = self._invoke
        self._chain: Forward = reduce(_wrap, reversed(list(layers)), innermost)

    def specs(self) -> tuple[dict[str, Any], ...]:
        """Name, description and JSON schema of each offered tool."""
        return tuple(tool.spec() for tool in self.tools.values())

    def call(self, call_id: str, name: str, arguments: dict[str, Any] | str) -> ToolResult:
        """Run one call through every layer and return what the caller sees."""
        index, self._calls = self._calls, self._calls + 1
        return self._chain(self._resolve(index, call_id, name, arguments))

    def _resolve(
        self, index: int, call_id: str, name: str, raw: dict[str, Any] | str
    ) -> GatewayCall:
        call = GatewayCall(index=index, id=call_id, name=name, raw=raw)
        tool = self.tools.get(name)
        if tool is None:
            problem = f"unknown tool {name!r}; available: {sorted(self.tools)}"
            return GatewayCall(index, call_id, name, raw, problem=problem)
        parsed: Any = raw
        if isinstance(raw, str):
            try:
                parsed = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                return _problem(call, f"arguments are not valid JSON: {exc.msg}")
        if not isinstance(parsed, dict):
            return _problem(call, "arguments must be a JSON object")
        return GatewayCall(index, call_id, name, raw, tool=tool, arguments=parsed)

    def _invoke(self, call: GatewayCall) -> ToolResult:
        if not call.ready or call.tool is None or call.arguments is None:
            return ToolResult(ok=False, error=call.problem)
        return call.tool.call(self.ctx, call.arguments)


def _problem(call: GatewayCall, problem: str) -> GatewayCall:
    return GatewayCall(call.index, call.id, call.name, call.raw, problem=problem)


def _wrap(inner: Forward, layer: Layer) -> Forward:
    def forward(call: GatewayCall) -> ToolResult:
        return layer.handle(call, inner)

    return forward
