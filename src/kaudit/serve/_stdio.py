"""MCP over this process's stdin and stdout, stoppable while the client is still connected.

The SDK's `stdio_server` reads stdin in a worker thread that a cancellation cannot
interrupt, so a server whose run is over (finished, or its client gone idle) would wait
until the client writes or closes. Reading stdin through the event loop instead makes
stopping immediate; stdout is still the SDK's.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LINE_LIMIT = 64 * 1024 * 1024
"""Longest JSON-RPC line read from the client (the SDK's own reader has no limit)."""


class _Lines:
    """The client's messages, one text line each, read without a worker thread."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@asynccontextmanager
async def _loop_stdin() -> AsyncIterator[_Lines | None]:
    """Stdin read by the event loop; None unless stdin is a pipe or a socket.

    What an MCP client starts a server with is a pipe; anything else (a file, a
    terminal, /dev/null, which epoll refuses) is left to the SDK's own reader.
    """
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        mode = 0
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        yield None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    # A duplicate, so closing the transport leaves the process's own stdin alone.
    pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        yield _Lines(reader)
    finally:
        transport.close()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` over stdin/stdout until the client leaves or the caller cancels."""
    async with _loop_stdin() as lines:
        # The SDK only iterates its stdin; an async iterator of lines is all it needs.
        stdin = cast("anyio.AsyncFile[str] | None", lines)
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())
