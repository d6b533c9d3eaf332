"""The tool door: kaudit as an MCP proxy in front of a third-party MCP server.

`--tools-command "CMD {db}"` starts the server for each run against the run's
handed-over world (`ToolServer`), wraps its tools as kaudit tools (`ProxiedTool`) and
serves them to the agent on a loopback MCP endpoint, `KAUDIT_MCP_URL` (also
`KAUDIT_TOOLS_URL`), with kaudit's `finish`. Every call the agent makes goes through
the gateway's own layers, Recording ∘ Limits ∘ Faults ∘ ProxiedTool:

- it is recorded (the door's evidence becomes the record's `tool_calls`, each with its tag);
- the task's `max_steps` caps the calls forwarded; later calls are refused, not forwarded;
- the run's faults break forwarded writing calls: a lost acknowledgement forwards the
  call and withholds the server's answer behind a transport error; a failure before
  commit never forwards it (kaudit holds no transaction it could roll back).

The boundary layer is not in the chain: it guards kaudit's own sandbox connection, and
the server has its own. It opens the world as its owner (the file, or the run's
database as kaudit's own user), so no identity can be enforced beneath it: the door
refuses one, and its configuration withdraws any other door's promise to enforce it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from kaudit.errors import InputError, KauditError
from kaudit.faults import FaultLayer
from kaudit.gateway import Layer, LimitsLayer, RecordingLayer, ToolGateway
from kaudit.serve._doors import DoorEvidence, DoorFactory, HandedWorld
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import FINISH, listed_tools, task_instructions
from kaudit.serve._proxied import ServerOwnsTheWorld, parse_tool_tags, proxied_tools
from kaudit.serve._upstream import ToolServer, WorldAddress, checked_tools_command, tools_argv
from kaudit.tools import ToolContext, ToolResult, ToolTag

STEP_BUDGET_USED = "the step budget of this run is used: this call was not executed"
STEP_BUDGET_STALLED = "the agent called tools past the task's max_steps"


class ToolDoor:
    """One run's tool door; open it with the run's world, close it after the agent exited.

    `command` is the server's command line with `{db}` (the SQLite world file) and/or
    `{url}` (the world's database URL) in it; `tags` tags tools by name (`_proxied`).
    """

    def __init__(self, command: str, tags: Mapping[str, ToolTag] | None = None) -> None:
        checked_tools_command(command)
        self.command = command
        self.tags = dict(tags or {})
        self._stack = AsyncExitStack()
        self._server: ToolServer | None = None
        self._gateway: ToolGateway | None = None
        self._recording = RecordingLayer()
        self._faults: FaultLayer | None = None
        self._lock = asyncio.Lock()
        self._budget = 0
        self._forwarded = 0
        self._refused = 0
        self._finish: str | None = None
        self._finished = False

    async def open(self, world: HandedWorld) -> dict[str, str]:
        """Start the server on `world`, serve its tools; the variables the agent gets.

        Raises `KauditError` when the command cannot serve this world (an identity,
        `{db}` on PostgreSQL) and `SubstrateError` when the server does not start.
        """
        if self._server is not None:
            raise KauditError("a tool door serves one run: open a new one for the next")
        if world.identity is not None:
            raise KauditError(
                "`tools_command` cannot serve an identity: the tool server opens the world as its "
                "owner (the file, or the run's database as kaudit's own user), where no "
                "scope holds; audit it without an identity"
            )
        address = WorldAddress(world.db_path, world.database_url, world.run_dir)
        server = ToolServer(tools_argv(self.command, address), address)
        self._server = server
        listing = await asyncio.to_thread(server.start)
        try:
            tools = proxied_tools(listing, server, self.tags)
        except KauditError:
            await asyncio.to_thread(server.close)
            raise
        layers: list[Layer] = [self._recording, LimitsLayer()]
        if world.faults:
            self._faults = FaultLayer(world.faults, world.seed, None)
            layers.append(self._faults)
        self._gateway = ToolGateway(tools, ToolContext(db=ServerOwnsTheWorld()), layers)
        self._budget = world.episode.task.max_steps
        served = self._agent_server(self._gateway, task_instructions(world.episode.task))
        url = await self._stack.enter_async_context(http_endpoint(served))
        return {"KAUDIT_MCP_URL": url, "KAUDIT_TOOLS_URL": url}

    async def close(self) -> DoorEvidence:
        """Stop serving the agent, then stop the server; what the door saw."""
        await self._stack.aclose()
        server, self._server = self._server, None
        stderr = "" if server is None else await asyncio.to_thread(server.close)
        injected = self._faults.injected if self._faults is not None else []
        gateway = self._gateway
        facts: dict[str, Any] = {
            "command": self.command,
            "server": server.server_info if server is not None else {},
            "tools": {name: t.tag for name, t in gateway.tools.items()} if gateway else {},
            "forwarded": self._forwarded,
            "refused_over_budget": self._refused,
            "finished": self._finished,
            "final_message": self._finish,
            "stderr": stderr,
        }
        return DoorEvidence(
            tool_calls=list(self._recording.calls),
            faults=[fault.model_dump(mode="json") for fault in injected],
            extra={"tool_door": facts},
            finish_message=self._finish,
            stalled=None if not self._refused else f"{STEP_BUDGET_STALLED} ({self._budget})",
        )

    async def call(self, name: str, arguments: dict[str, Any] | str) -> ToolResult:
        """One agent call through the gateway, in call order, within the step budget."""
        async with self._lock:  # one call at a time: recording order and fault draws are the run's
            gateway = self._gateway
            if gateway is None:
                return ToolResult(ok=False, error="the tool door is closed")
            if self._forwarded >= self._budget:
                self._refused += 1
                return ToolResult(ok=False, error=STEP_BUDGET_USED)
            self._forwarded += 1
            call_id = f"tool-{self._forwarded}"
            return await asyncio.to_thread(gateway.call, call_id, name, arguments)

    def _agent_server(self, gateway: ToolGateway, instructions: str) -> Server[Any]:
        """The MCP server the agent connects to: the proxied tools, then `finish`."""
        listing = listed_tools(gateway.specs())

        async def list_tools(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=listing)

        async def call_tool(
            ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            arguments = dict(params.arguments or {})
            if params.name == FINISH:
                message = arguments.get("message")
                self._finished = True
                self._finish = message if isinstance(message, str) else json.dumps(message)
                return _reply(ToolResult(ok=True, content={"finished": True}))
            return _reply(await self.call(params.name, arguments))

        return Server(
            "kaudit-tools", instructions=instructions, on_list_tools=list_tools,
            on_call_tool=call_tool,
        )  # fmt: skip


@dataclass(frozen=True)
class ToolDoorConfig:
    """What `--tools-command` / `--tools-tag` configure: a fresh `ToolDoor` per run."""

    command: str
    tags: Mapping[str, ToolTag] = field(default_factory=dict)
    bypasses_identity = True
    """The server opens the world as its owner (the SQLite file, or the run's database as
    the substrate's user), beneath any login role or row-level security: no identity a
    run declares holds for its writes."""

    def __call__(self, world: HandedWorld) -> ToolDoor:
        """The run's own door (each run its own server, gateway and step count)."""
        return ToolDoor(self.command, self.tags)

    def describe(self) -> dict[str, Any]:
        """The tools under audit, for the manifest."""
        return {"kind": "tools", "command": self.command, "tags": dict(self.tags)}


def tool_doors(options: Mapping[str, Any]) -> tuple[DoorFactory, ...]:
    """The tool door an external agent's options ask for (`tools_command`, `tools_tag`).

    Both are checked here, before any run: the program must exist and every tag parse.
    """
    command, tags = options.get("tools_command"), options.get("tools_tag")
    if not command:
        if tags:
            raise InputError("tools_tag", "needs `tools_command`: the server whose tools it tags")
        return ()
    return (ToolDoorConfig(checked_tools_command(str(command)), parse_tool_tags(tags)),)


def _reply(result: ToolResult) -> types.CallToolResult:
    """The agent's answer: the server's own text as it sent it; kaudit's errors as JSON."""
    answer = result.content if result.ok and isinstance(result.content, str) else None
    text = result.to_text() if answer is None else answer
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=not result.ok
    )
