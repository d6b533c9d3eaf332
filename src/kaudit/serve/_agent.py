"""`--agent mcp`: an external program, an MCP client, is the agent of each run.

For every run kaudit serves the run's sandbox over streamable HTTP on a free loopback
port and starts the command with the URL and the task in its environment:

- `KAUDIT_MCP_URL`: the server's URL (`http://127.0.0.1:PORT/mcp`);
- `KAUDIT_TASK_PROMPT`, `KAUDIT_SYSTEM_PROMPT`: what the agent is asked;
- `KAUDIT_TASK_ID`, `KAUDIT_RUN_ID`, `KAUDIT_SEED`: which run this is;
- the run's world and its doors' variables, as for `--agent command` (`_command`).

The run ends when the agent calls `finish` (its message is the final message), when
the command exits (a non-zero exit is an `errored` run) or at the timeout (a `stalled`
run: the agent's time budget is spent, like a step budget). The command runs in its own
process group, and the whole group is ended with the run, so a shell's children cannot
outlive it; a guard (`_guard`) leads the group and ends it if kaudit itself dies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from kaudit.agents import Episode, Observation, Turn
from kaudit.errors import InputError
from kaudit.serve._calls import ServedRun, ServedSession
from kaudit.serve._command import (
    CommandRun,
    ProgramAgent,
    build_program_agent,
    task_environment,
)
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import mcp_server, task_instructions
from kaudit.serve._process import EXIT_GRACE_S


def agent_environment(episode: Episode, url: str) -> dict[str, str]:
    """The variables the command receives on top of kaudit's own environment."""
    return {"KAUDIT_MCP_URL": url} | task_environment(episode)


class McpCommandSession:
    """One run: the HTTP server and the agent process, both started at the first turn."""

    def __init__(
        self,
        command: str,
        episode: Episode,
        timeout_s: float,
        agent: McpCommandAgent | None = None,
    ) -> None:
        self._episode = episode
        self._timeout_s = timeout_s
        self._agent = agent
        self._served = ServedRun()
        self._inner = ServedSession(self._served)
        self._stack = AsyncExitStack()
        doors = () if agent is None else agent.doors
        watch = agent is not None and agent.watch_reach
        self._run = CommandRun(command, episode, doors, watch_server=watch)
        self._started = False
        self._watch: asyncio.Task[None] | None = None

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """Start serving on the first call; then each turn is the agent's next call."""
        if not self._started:
            self._started = True
            await self._start()
        return await self._inner.next_turn(observations)

    async def _start(self) -> None:
        async def verdict() -> str:
            return '{"finished": true}'  # labeling happens after the agent has gone

        server = mcp_server(
            self._served,
            self._episode.tool_specs,
            instructions=task_instructions(self._episode.task),
            verdict=verdict,
        )
        url = await self._stack.enter_async_context(http_endpoint(server))
        await self._run.start({"KAUDIT_MCP_URL": url})
        self._watch = asyncio.create_task(self._watch_process())

    async def _watch_process(self) -> None:
        ended = await self._run.wait(self._timeout_s)
        stopped = self._run.stop_reason()
        if stopped is not None:
            self._served.stall(stopped)  # a door ended the run: its budget is spent
        elif ended.timed_out:
            self._served.stall(f"agent command timed out after {self._timeout_s:g} s")
        elif ended.code == 0:
            # exited without `finish`: the model's last reply, if the model door saw one
            self._served.finish(self._run.last_message())
        else:
            line = self._run.process.stderr_line()
            self._served.fail(f"agent command exited with code {ended.code}: {line}")

    async def aclose(self) -> None:
        """Refuse further calls, end the agent's process group, stop serving.

        A finished agent gets `EXIT_GRACE_S` to exit by itself; a timed-out one none.
        """
        await self._inner.aclose()
        try:
            evidence = await self._run.end(EXIT_GRACE_S)
            if self._agent is not None:
                self._agent.keep(self._episode.run_id, evidence)
        finally:
            if self._watch is not None:
                self._watch.cancel()
            await self._stack.aclose()


class McpCommandAgent(ProgramAgent):
    """An external MCP-client program as the model under audit (`--agent mcp[:NAME]`).

    It is handed the run's world too (`KAUDIT_DB_PATH`, `KAUDIT_DATABASE_URL`), except
    with an identity on SQLite: a file enforces no scope, so kaudit's tools are then
    its only way in.
    """

    kind = "mcp"
    world_required = False  # kaudit's tools are its way in when no world is handed over

    def start(self, episode: Episode) -> McpCommandSession:
        """Begin one run; the server and the process start with its first turn."""
        return McpCommandSession(self.command, episode, self.timeout_s, self)


def build_mcp_agent(argument: str, options: dict[str, Any]) -> McpCommandAgent:
    """Agent-registry builder for `mcp` and `mcp:NAME` (entry point `kaudit.agents`)."""
    if options.get("tools_command") or options.get("tools_tag"):
        raise InputError(
            "tools_command",
            "needs `agents` of kind command: the third-party server's tools replace "
            "kaudit's own at KAUDIT_MCP_URL, where an mcp agent finds them",
        )
    return build_program_agent(McpCommandAgent, argument, options)
