"""Serving a run to an external agent: MCP (`kaudit mcp serve`, `--agent mcp`).

Every external tool call enters the run through `ServedRun` and is executed and
recorded by the harness loop, exactly like a built-in agent's call.
"""

from importlib.util import find_spec

from kaudit.errors import KauditError

if find_spec("mcp") is None or find_spec("uvicorn") is None:
    raise KauditError("MCP serving needs the mcp extra: pip install 'kaudit[mcp]'")

from kaudit.serve._agent import build_mcp_agent
from kaudit.serve._calls import Recorded, ServedRun, start_served_run
from kaudit.serve._command import CommandAgent, build_command_agent
from kaudit.serve._doors import Door, DoorEvidence, DoorFactory, HandedWorld, register_door
from kaudit.serve._serve import ServeOptions
from kaudit.serve._tooldoor import ToolDoor
from kaudit.serve._wire_door import postgres_wire_door

__all__ = [
    "CommandAgent",
    "Door",
    "DoorEvidence",
    "DoorFactory",
    "HandedWorld",
    "Recorded",
    "ServeOptions",
    "ServedRun",
    "ToolDoor",
    "build_command_agent",
    "build_mcp_agent",
    "postgres_wire_door",
    "register_door",
    "start_served_run",
]
