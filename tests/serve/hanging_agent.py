"""An MCP-client agent that hangs: it connects, lists the tools, then sleeps, connection open.

First of all it starts a child process (as a shell would) and writes the child's pid and
its own to the file named by its first argument ("CHILD AGENT"), so a test can check that
nothing the agent started outlives its run. The MCP client is imported only after that,
so the pid file exists long before any timeout.

    python tests/serve/hanging_agent.py PIDFILE
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path


async def hang(url: str) -> None:
    from mcp import Client

    async with Client(url) as client:
        await client.list_tools()
        await asyncio.sleep(600)


if __name__ == "__main__":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    written = Path(sys.argv[1] + ".part")
    written.write_text(f"{child.pid} {os.getpid()}")
    written.replace(sys.argv[1])  # whole or absent: a test polling for it never reads half
    asyncio.run(hang(os.environ["KAUDIT_MCP_URL"]))
