"""A tiny external MCP-client agent: replays one of the task's scripts over MCP.

It is what `kaudit run --agent mcp --agent-command ...` starts in the tests and the
docs: the official MCP client, connected to `KAUDIT_MCP_URL`, calling the tools a
script of task `KAUDIT_TASK_ID` names, then `finish` with the script's message. A
script step that raises an error makes it exit with code 1 (a crashed agent).

    python -m kaudit.serve.example_agent --suite builtin --script oracle
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from mcp import Client

from kaudit.spec._script import ScriptStep
from kaudit.suites import load_suite


async def replay(url: str, steps: tuple[ScriptStep, ...]) -> int:
    """Replay `steps` against the server at `url`; the process exit code."""
    async with Client(url) as client:
        await client.list_tools()
        for step in steps:
            if step.error is not None:
                print(f"scripted crash: {step.error}", file=sys.stderr)
                return 1
            if step.stall:
                continue
            for call in step.tool_calls:
                await client.call_tool(call.name, dict(call.arguments))
            if not step.tool_calls and step.content is not None:
                await client.call_tool("finish", {"message": step.content})
                return 0
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: `--suite` and `--script` choose what to replay."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="builtin")
    parser.add_argument("--script", default="oracle")
    args = parser.parse_args(argv)
    task = load_suite(args.suite).tasks[os.environ["KAUDIT_TASK_ID"]]
    steps = tuple(task.script(args.script).steps)
    return asyncio.run(replay(os.environ["KAUDIT_MCP_URL"], steps))


if __name__ == "__main__":
    sys.exit(main())
