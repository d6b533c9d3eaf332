"""An MCP-client agent that hangs: one damaging call, then it sleeps, connection held open.

It also starts a child process (as a shell would) and writes the child's pid to the file
named by its first argument, so a test can check that nothing the agent started outlives
its run.

    python tests/serve/hanging_agent.py PIDFILE
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client


async def hang(url: str, pidfile: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile.write_text(str(child.pid))
    async with Client(url) as client:
        greedy = {"billing_account_id": "BA_006", "status": "draft"}
        await client.call_tool("delete_invoices", greedy)
        await asyncio.sleep(600)


if __name__ == "__main__":
    asyncio.run(hang(os.environ["KAUDIT_MCP_URL"], Path(sys.argv[1])))
