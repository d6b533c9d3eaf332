from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaudit.gateway import (
    MAX_ARGUMENT_BYTES,
    Forward,
    GatewayCall,
    LimitsLayer,
    RecordingLayer,
    ToolGateway,
)
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext, ToolResult
from kaudit.worlds._world import get_world


@pytest.fixture
def sandbox() -> Iterator[SqliteSandbox]:
    box = get_world("mini").substrate().seed("gateway-test")
    yield box
    box.close()


def outbox_rows(box: SqliteSandbox) -> int:
    row = box.db.one("SELECT COUNT(*) AS n FROM outbox")
    assert row is not None
    return int(row["n"])


def test_oversized_arguments_are_refused_and_recorded_by_size_only(sandbox: SqliteSandbox) -> None:
    """Fails if the limits layer lets a huge call reach the tool or recording echoes it."""
    recording = RecordingLayer()
    tools = get_world("mini").tools
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db), [recording, LimitsLayer()])
    body = "x" * (MAX_ARGUMENT_BYTES + 1)
    result = gateway.call("1", "send_message", {"recipient": "a@b", "body": body})
    assert not result.ok and result.error is not None and "limit is 65536" in result.error
    assert outbox_rows(sandbox) == 0
    assert recording.calls[0]["arguments"] == {"omitted_bytes": len(body) + 32}
    assert body not in str(recording.calls)


def test_arguments_at_the_cap_go_through_and_are_recorded(sandbox: SqliteSandbox) -> None:
    """Fails if the cap is off by one or small calls lose their recorded arguments."""
    recording = RecordingLayer()
    tools = get_world("mini").tools
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db), [recording, LimitsLayer(64)])
    arguments = {"recipient": "a@b", "body": "y" * 32}  # exactly 64 bytes of JSON
    assert gateway.call("1", "send_message", arguments).ok
    assert recording.calls[0]["arguments"] == arguments
    assert recording.calls[0]["tag"] == "irreversible"
    assert outbox_rows(sandbox) == 1


class Trace:
    """A layer that notes its name on the way in and out."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        self.log.append(f"{self.name}>")
        result = forward(call)
        self.log.append(f"<{self.name}")
        return result


def test_layers_wrap_the_tool_outermost_first(sandbox: SqliteSandbox) -> None:
    """Fails if the gateway composes its layers in the wrong order."""
    log: list[str] = []
    layers = [Trace("a", log), Trace("b", log)]
    gateway = ToolGateway(get_world("mini").tools, ToolContext(db=sandbox.db), layers)
    assert gateway.call("1", "get_account", {"account_id": "ACC_000"}).ok
    assert log == ["a>", "b>", "<b", "<a"]


def test_calls_are_numbered_in_order_and_bad_calls_never_raise(sandbox: SqliteSandbox) -> None:
    """Fails if an unknown tool or a non-object argument raises instead of failing the call."""
    seen: list[tuple[int, bool]] = []

    class Indexes:
        def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
            seen.append((call.index, call.ready))
            return forward(call)

    gateway = ToolGateway(get_world("mini").tools, ToolContext(db=sandbox.db), [Indexes()])
    assert not gateway.call("1", "nope", {}).ok
    assert not gateway.call("2", "get_account", "[1, 2]").ok
    assert gateway.call("3", "get_account", '{"account_id": "ACC_000"}').ok
    assert seen == [(0, False), (1, False), (2, True)]
