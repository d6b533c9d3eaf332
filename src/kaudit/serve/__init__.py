"""Serving a run to an external agent: MCP (`kaudit mcp serve`, `--agent mcp`).

Every external tool call enters the run through `ServedRun` and is executed and
recorded by the harness loop, exactly like a built-in agent's call.
"""

from importlib.util import find_spec

from kaudit.errors import KauditError
from kaudit.ledger._spool import RunSpooled, spool_dir, spooled_runs

if find_spec("mcp") is None or find_spec("uvicorn") is None:
    raise KauditError("MCP serving needs the mcp extra: pip install 'kaudit[mcp]'")

from kaudit.serve._agent import McpCommandAgent, agent_environment, build_mcp_agent
from kaudit.serve._calls import (
    CallReply,
    Recorded,
    ServedAgent,
    ServedRun,
    ServedSession,
    start_served_run,
)
from kaudit.serve._command import CommandAgent, CommandRun, build_command_agent, task_environment
from kaudit.serve._doors import (
    DOORS,
    Door,
    DoorEvidence,
    DoorFactory,
    HandedWorld,
    close_doors,
    doors_for,
    open_doors,
    register_door,
)
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import FINISH, listed_tools, mcp_server, task_instructions
from kaudit.serve._proxied import ProxiedTool, parse_tool_tags, tag_for
from kaudit.serve._serve import (
    ServeOptions,
    append_served,
    open_served,
    serve_task,
    served_config,
    verdict_text,
)
from kaudit.serve._stdio import serve_stdio
from kaudit.serve._timeouts import AGENT_TIMEOUT_S, IDLE_TIMEOUT_S, end_when_idle
from kaudit.serve._tooldoor import ToolDoor
from kaudit.serve._upstream import ToolServer
from kaudit.serve._wire_door import PostgresWireDoor, postgres_wire_door

__all__ = [
    "AGENT_TIMEOUT_S",
    "DOORS",
    "FINISH",
    "IDLE_TIMEOUT_S",
    "CallReply",
    "CommandAgent",
    "CommandRun",
    "Door",
    "DoorEvidence",
    "DoorFactory",
    "HandedWorld",
    "McpCommandAgent",
    "PostgresWireDoor",
    "ProxiedTool",
    "Recorded",
    "RunSpooled",
    "ServeOptions",
    "ServedAgent",
    "ServedRun",
    "ServedSession",
    "ToolDoor",
    "ToolServer",
    "agent_environment",
    "append_served",
    "build_command_agent",
    "build_mcp_agent",
    "close_doors",
    "doors_for",
    "end_when_idle",
    "http_endpoint",
    "listed_tools",
    "mcp_server",
    "open_doors",
    "open_served",
    "parse_tool_tags",
    "postgres_wire_door",
    "register_door",
    "serve_stdio",
    "serve_task",
    "served_config",
    "spool_dir",
    "spooled_runs",
    "start_served_run",
    "tag_for",
    "task_environment",
    "task_instructions",
    "verdict_text",
]
