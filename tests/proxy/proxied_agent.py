"""An external agent whose model calls go through kaudit's model proxy (for the tests).

It talks to its model with the official `openai` client, which reads `OPENAI_BASE_URL`
and `OPENAI_API_KEY` from the environment (the proxy's), offers the task's tools, runs
every tool call the model proposes with its own tools, sends the results back, and
stops at the first reply without tool calls. It never calls `finish`: its final message
is whatever the proxy saw the model say last.

    python proxied_agent.py --tools mcp      # kaudit's tools over MCP (KAUDIT_MCP_URL)
    python proxied_agent.py --tools sqlite   # its own SQL on the handed-over world file
    python proxied_agent.py --stream         # streamed replies
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
from typing import Any

import openai

SQL = {
    "update_account": "UPDATE account SET status = :status WHERE id = :account_id",
    "delete_account": "DELETE FROM account WHERE id = :account_id",
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": {"type": "object"}},
    }
    for name in ("get_account", *SQL)
]


async def ask(client: openai.AsyncOpenAI, messages: list[Any], stream: bool) -> dict[str, Any]:
    """One reply as a message dict, streamed or whole."""
    if not stream:
        reply = await client.chat.completions.create(
            model=os.environ.get("KAUDIT_MODEL", "bot"), messages=messages, tools=TOOLS
        )
        return reply.choices[0].message.model_dump(exclude_none=True)
    text, calls = [], {}
    chunks = await client.chat.completions.create(
        model=os.environ.get("KAUDIT_MODEL", "bot"), messages=messages, tools=TOOLS, stream=True
    )
    async for chunk in chunks:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for piece in choice.delta.tool_calls or []:
                call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = piece.id or call["id"]
                call["name"] = (piece.function and piece.function.name) or call["name"]
                call["arguments"] += (piece.function and piece.function.arguments) or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for _, c in sorted(calls.items())
        ]
    return message


async def run(tools: str, stream: bool) -> None:
    messages: list[Any] = [
        {"role": "system", "content": os.environ["KAUDIT_SYSTEM_PROMPT"]},
        {"role": "user", "content": os.environ["KAUDIT_TASK_PROMPT"]},
    ]
    async with openai.AsyncOpenAI(max_retries=0) as client:
        call_tool = await _tools(tools)
        for _ in range(10):
            message = await ask(client, messages, stream)
            messages.append(message)
            if not message.get("tool_calls"):
                return
            for call in message["tool_calls"]:
                arguments = json.loads(call["function"]["arguments"] or "{}")
                result = await call_tool(call["function"]["name"], arguments)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})


async def _tools(kind: str) -> Any:
    if kind == "sqlite":

        async def sqlite_call(name: str, arguments: dict[str, Any]) -> str:
            with sqlite3.connect(os.environ["KAUDIT_DB_PATH"]) as conn:
                changed = conn.execute(SQL[name], {"status": None} | arguments).rowcount
            return json.dumps({"changed": changed})

        return sqlite_call

    from mcp import Client

    async def mcp_call(name: str, arguments: dict[str, Any]) -> str:
        async with Client(os.environ["KAUDIT_MCP_URL"]) as mcp:
            result = await mcp.call_tool(name, arguments)
        return "".join(getattr(block, "text", "") for block in result.content)

    return mcp_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", choices=["mcp", "sqlite"], default="mcp")
    parser.add_argument("--stream", action="store_true")
    args = parser.parse_args()
    asyncio.run(run(args.tools, args.stream))


if __name__ == "__main__":
    main()
