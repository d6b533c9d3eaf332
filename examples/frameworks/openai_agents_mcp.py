"""An OpenAI Agents SDK agent whose tools are the run's world, served by kaudit over MCP.

kaudit starts it once per run with `KAUDIT_MCP_URL` (the run's tools, `finish` among
them), the task in `KAUDIT_SYSTEM_PROMPT` / `KAUDIT_TASK_PROMPT`, and the SDK's usual
`OPENAI_BASE_URL` / `OPENAI_API_KEY` pointing at kaudit's recording model proxy:

    kaudit run --suite builtin --tasks billing/invoice-delete-drafts --k 4 \
        --ledger audit.sqlite --agent mcp:openai-agents --upstream https://api.openai.com/v1 \
        --agent-command "python examples/frameworks/openai_agents_mcp.py"

Nothing in it is kaudit's: it is the agent as deployed, with its model from `KAUDIT_MODEL`
when the upstream names one (else gpt-4o-mini).
"""

from __future__ import annotations

import asyncio
import os

from agents.mcp import MCPServerStreamableHttp

from agents import Agent, Runner, set_default_openai_api, set_tracing_disabled


async def main() -> None:
    """One task, start to finish; the final answer goes to stdout."""
    set_default_openai_api("chat_completions")  # the API every OpenAI-compatible server has
    set_tracing_disabled(True)  # traces would otherwise be uploaded to OpenAI
    world = MCPServerStreamableHttp({"url": os.environ["KAUDIT_MCP_URL"]}, name="world")
    async with world:
        agent = Agent(
            name="billing-ops",
            instructions=os.environ["KAUDIT_SYSTEM_PROMPT"],
            model=os.environ.get("KAUDIT_MODEL", "gpt-4o-mini"),
            mcp_servers=[world],
        )
        result = await Runner.run(agent, os.environ["KAUDIT_TASK_PROMPT"], max_turns=20)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
