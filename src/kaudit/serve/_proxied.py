"""A third-party MCP server's tools as kaudit `Tool`s, so the gateway's layers apply to them.

Each listed tool becomes a `ProxiedTool`: its schema and description are the server's,
its call is forwarded to the server. Recording, the argument cap, the step budget and
fault injection then treat it exactly like a built-in tool.

A kaudit tool carries a tag (`read`, `reversible_write`, `irreversible`) that decides
whether faults may hit it. A third-party tool has none, so it is tagged, in order:

1. by the user (`--tools-tag NAME=TAG`), who knows the tool;
2. by the server's own annotations: `readOnlyHint: true` is `read`,
   `destructiveHint: false` is `reversible_write`;
3. otherwise `irreversible`: a tool that might write is treated as one that does, so
   no write escapes the fault layer because nobody said what it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from kaudit.errors import InputError, KauditError, SubstrateError
from kaudit.serve._mcp import FINISH
from kaudit.serve._upstream import ToolServer
from kaudit.tools import TOOL_TAGS, Tool, ToolContext, ToolResult, ToolTag


class _AnyArguments(BaseModel):
    """Arguments are checked by the server against its own schema, not by kaudit."""

    model_config = ConfigDict(extra="allow")


def _unused(ctx: ToolContext, **arguments: Any) -> Any:
    raise NotImplementedError("a proxied tool is called through its server")  # pragma: no cover


class ServerOwnsTheWorld:
    """The `Db` of a proxied call's context: kaudit holds no connection, the server does.

    Any use is a harness bug (a layer that assumed a sandbox transaction), so it
    raises `SubstrateError` instead of touching some other database.
    """

    def _refuse(self) -> NoReturn:
        raise SubstrateError("a proxied tool's world is its server's; kaudit holds no connection")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Refused."""
        self._refuse()

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """Refused."""
        self._refuse()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Refused."""
        self._refuse()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Refused."""
        self._refuse()
        yield  # pragma: no cover


@dataclass(frozen=True)
class ProxiedTool(Tool):
    """A tool a third-party MCP server offers; calling it forwards the call to the server."""

    server: ToolServer | None = None

    def call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        """Forward the call; the sandbox context is unused (the server owns its connection)."""
        if self.server is None:
            return ToolResult(ok=False, error="the tool server is not running", internal=True)
        return self.server.call(self.name, arguments)


def parse_tool_tags(text: str | None) -> dict[str, ToolTag]:
    """`NAME=TAG[,NAME=TAG...]` as a mapping; `InputError` naming the bad item otherwise."""
    tags: dict[str, ToolTag] = {}
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        name, sep, tag = (side.strip() for side in item.partition("="))
        if not sep or not name:
            raise InputError("tools_tag", f"has {item!r}, which is not NAME=TAG")
        if tag not in TOOL_TAGS:
            raise InputError("tools_tag", f"gives {name} the tag {tag!r}; use one of {TOOL_TAGS}")
        tags[name] = tag
    return tags


def tag_for(tool: types.Tool, tags: Mapping[str, ToolTag]) -> ToolTag:
    """The tag a listed tool gets: the user's, else its annotations', else `irreversible`."""
    if tool.name in tags:
        return tags[tool.name]
    hints = tool.annotations
    if hints is not None and hints.read_only_hint is True:
        return "read"
    if hints is not None and hints.destructive_hint is False:
        return "reversible_write"
    return "irreversible"


def proxied_tools(
    listing: Sequence[types.Tool], server: ToolServer, tags: Mapping[str, ToolTag]
) -> dict[str, ProxiedTool]:
    """The server's tools, in its order, as kaudit tools forwarding to `server`.

    Raises `KauditError` when the server offers a tool named like kaudit's own `finish`
    (the agent could not tell them apart), lists one name twice, or `tags` names a tool
    the server does not offer (a typo would otherwise tag nothing, silently).
    """
    names = [tool.name for tool in listing]
    if FINISH in names:
        raise KauditError(f"the server of `tools_command` offers a tool named {FINISH!r}, "
                          "which kaudit keeps for the agent to end its run")  # fmt: skip
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise KauditError(f"the server of `tools_command` lists {twice} more than once")
    unknown = sorted(set(tags) - set(names))
    if unknown:
        raise InputError("tools_tag", f"names {unknown}, which the server lacks; it offers {names}")
    return {
        tool.name: ProxiedTool(
            name=tool.name,
            description=tool.description or "",
            tag=tag_for(tool, tags),
            fn=_unused,
            arguments=_AnyArguments,
            parameters=dict(tool.input_schema),
            server=server,
        )
        for tool in listing
    }
