"""A third-party MCP server, started per run over stdio, as the tools behind kaudit's proxy.

`--tools-command "CMD {db}"` names a server kaudit did not write (the reference SQLite
MCP server, say). `ToolServer` starts it against the run's handed-over world, lists its
tools and forwards calls with the official `mcp` SDK client. The client lives on its own
event loop in its own thread, so a call can be made synchronously from anywhere (the
gateway's layers are synchronous): from the run's event loop it blocks that loop only for
the server's answer, and no caller can deadlock waiting on the loop it runs on.

The server starts in its own session (the SDK's doing) with the per-run directory as its
working directory, the SDK's short list of inherited variables, and the world's variables
(`KAUDIT_DB_PATH`, `KAUDIT_DATABASE_URL`). Closing stops it: stdin closed, then SIGTERM,
then SIGKILL to its process group. If kaudit itself is killed, the server's stdin closes
with it, which ends a stdio server.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client

from kaudit.errors import InputError, KauditError, SubstrateError
from kaudit.tools import ToolResult

START_TIMEOUT_S = 30.0
"""How long a tool server may take to start and answer `initialize` and `tools/list`."""
CALL_TIMEOUT_S = 60.0
"""How long one forwarded call may wait for the server's answer."""
STDERR_TAIL_BYTES = 8 * 1024
"""How much of the server's stderr a failure message or a record keeps (its end)."""

DB_FIELD = "{db}"
URL_FIELD = "{url}"


@dataclass(frozen=True)
class WorldAddress:
    """Where the run's world is, as the tool server is told: a file, a URL, or both."""

    db_path: Path | None
    database_url: str | None
    run_dir: Path

    def environment(self) -> dict[str, str]:
        """The world's variables, as the agent's own code gets them."""
        env: dict[str, str] = {}
        if self.db_path is not None:
            env["KAUDIT_DB_PATH"] = str(self.db_path)
        if self.database_url is not None:
            env["KAUDIT_DATABASE_URL"] = self.database_url
        return env


def checked_tools_command(command: str) -> str:
    """`command` if its program exists, else an `InputError` naming `tools_command`."""
    argv = shlex.split(command)
    if not argv:
        raise InputError("tools_command", "is empty: give the MCP server's command line")
    if shutil.which(argv[0]) is None:
        raise InputError("tools_command", f"names a program not found: {argv[0]!r}")
    return command


def tools_argv(command: str, world: WorldAddress) -> list[str]:
    """`command` split like a shell line, `{db}` and `{url}` replaced by the world's address.

    Raises `KauditError` naming `tools_command` when it is empty, its program is not
    found, or it asks for an address this world does not have (`{db}` on PostgreSQL).
    """
    argv = shlex.split(checked_tools_command(command))
    fields = {DB_FIELD: world.db_path, URL_FIELD: world.database_url}
    for name, value in fields.items():
        if value is None and any(name in arg for arg in argv):
            raise KauditError(
                f"`tools_command` uses {name}, which is not available for this run's world "
                f"(a SQLite world has {DB_FIELD} and {URL_FIELD}; PostgreSQL only {URL_FIELD})"
            )
    out = []
    for arg in argv:
        for name, value in fields.items():
            if value is not None:
                arg = arg.replace(name, str(value))
        out.append(arg)
    return out


class ToolServer:
    """One running third-party MCP server and the client session connected to it.

    `start` blocks until the server has answered `initialize` and `tools/list` (or
    raises `SubstrateError` with the end of its stderr); `call` forwards one call and
    never raises for what the server does: a tool error, a crash or a timeout of the
    server all come back as a failed `ToolResult`. `close` stops the server; it is safe
    to call twice and after a failed start.
    """

    def __init__(self, argv: list[str], world: WorldAddress) -> None:
        self.argv = argv
        self.world = world
        self.listing: list[types.Tool] = []
        self.server_info: dict[str, Any] = {}
        self._stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._session: ClientSession | None = None
        self._stderr: IO[str] | None = None

    def start(self) -> list[types.Tool]:
        """Start the server, connect, and list its tools (every page)."""
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            self._portal = self._stack.enter_context(start_blocking_portal())
            self._session = self._stack.enter_context(
                self._portal.wrap_async_context_manager(self._connected(self._stderr))
            )
        except Exception as exc:
            stderr = self.close()
            raise SubstrateError(
                f"the MCP server of `tools_command` {shlex.join(self.argv)!r} did not start: "
                f"{_first_cause(exc)}; its stderr ends: {stderr or '(nothing)'}"
            ) from None
        return self.listing

    @contextlib.asynccontextmanager
    async def _connected(self, stderr: IO[str]) -> AsyncIterator[ClientSession]:
        """The server process and an initialized session, listed; stopped on exit."""
        params = StdioServerParameters(
            command=self.argv[0],
            args=self.argv[1:],
            env=self.world.environment(),
            cwd=self.world.run_dir,
        )
        async with (
            stdio_client(params, errlog=cast(TextIO, stderr)) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(START_TIMEOUT_S):
                init = await session.initialize()
                self.listing = await _all_tools(session)
            self.server_info = {"name": init.server_info.name, "version": init.server_info.version}
            yield session

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Forward one call and wait for its answer, as the agent would see it."""
        if self._portal is None or self._session is None:
            return ToolResult(ok=False, error="the tool server is not running", internal=True)
        session, sent = self._session, dict(arguments)
        try:
            result = self._portal.call(
                lambda: session.call_tool(name, sent, read_timeout_seconds=CALL_TIMEOUT_S)
            )
        except Exception as exc:  # the server crashed, hung or spoke nonsense: the tool failed
            error = f"tool server failed: {_first_cause(exc)}"
            return ToolResult(ok=False, error=error, internal=True)
        if not isinstance(result, types.CallToolResult):
            return ToolResult(ok=False, error="tool server asked for input", internal=True)
        return tool_result(result)

    def close(self) -> str:
        """Stop the server and its client; the end of its stderr, for the record."""
        self._session = None
        self._portal = None
        self._stack.close()  # the server has exited (or been killed) when this returns
        if self._stderr is None:
            return ""
        with self._stderr as stderr:
            self._stderr = None
            stderr.seek(0)
            return stderr.read()[-STDERR_TAIL_BYTES:].strip()


def _first_cause(exc: BaseException) -> str:
    """The first leaf of a task group's exception group, as text."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool the server lists, following its pagination cursor."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def tool_result(result: types.CallToolResult) -> ToolResult:
    """The server's answer as a `ToolResult`: its structured content, else its text.

    `is_error` answers are failed results whose error is the server's text (the agent
    gets it as `{"error": TEXT}`, like any tool error); a text answer is passed on as is.
    """
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    if result.is_error:
        return ToolResult(ok=False, error=text or "the tool reported an error")
    if result.structured_content is not None:
        return ToolResult(ok=True, content=result.structured_content)
    others = [block.type for block in result.content if not isinstance(block, types.TextContent)]
    if others and not text:
        return ToolResult(ok=True, content={"content_types": others})
    return ToolResult(ok=True, content=text)
