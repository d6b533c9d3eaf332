"""Streamable-HTTP serving of an MCP server on a loopback port, inside the caller's loop."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server

MCP_PATH = "/mcp"


@asynccontextmanager
async def http_endpoint(
    server: Server[Any], host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[str]:
    """Serve `server` at `http://host:port/mcp` until the block exits; yields the URL.

    The socket is bound before uvicorn starts, so with `port=0` the URL names a free
    port that nobody else can take between choosing it and serving on it.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve(sockets=[sock]))
    try:
        while not web.started:
            if task.done():
                await task  # surfaces a startup failure
            await asyncio.sleep(0.01)
        bound = sock.getsockname()
        yield f"http://{bound[0]}:{bound[1]}{MCP_PATH}"
    finally:
        web.should_exit = True
        await task
        sock.close()
