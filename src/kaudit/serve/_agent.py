"""`--agent mcp`: an external program, an MCP client, is the agent of each run.

For every run kaudit serves the run's sandbox over streamable HTTP on a free loopback
port and starts the command with the URL and the task in its environment:

- `KAUDIT_MCP_URL`: the server's URL (`http://127.0.0.1:PORT/mcp`);
- `KAUDIT_TASK_PROMPT`, `KAUDIT_SYSTEM_PROMPT`: what the agent is asked;
- `KAUDIT_TASK_ID`, `KAUDIT_RUN_ID`, `KAUDIT_SEED`: which run this is.

The run ends when the agent calls `finish` (its message is the final message), when
the command exits (a non-zero exit is an `errored` run) or at the timeout (a `stalled`
run: the agent's time budget is spent, like a step budget). The command runs in its own
process group, and the whole group is ended with the run, so a shell's children cannot
outlive it; a guard (`_guard`) leads the group and ends it if kaudit itself dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any

from kaudit.agents import AgentDefaults, Episode, Observation, Turn
from kaudit.errors import KauditError
from kaudit.serve._calls import ServedRun, ServedSession
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import mcp_server, task_instructions
from kaudit.serve._timeouts import AGENT_TIMEOUT_S, checked_seconds

EXIT_GRACE_S = 5.0
"""How long a finished agent may take to exit by itself, and a terminated one to die."""


def agent_environment(episode: Episode, url: str) -> dict[str, str]:
    """The variables the command receives on top of kaudit's own environment."""
    return {
        "KAUDIT_MCP_URL": url,
        "KAUDIT_TASK_PROMPT": episode.task.prompt,
        "KAUDIT_SYSTEM_PROMPT": episode.task.system_prompt,
        "KAUDIT_TASK_ID": episode.task.id,
        "KAUDIT_RUN_ID": episode.run_id,
        "KAUDIT_SEED": str(episode.seed),
    }


class McpCommandSession:
    """One run: the HTTP server and the agent process, both started at the first turn."""

    def __init__(self, command: str, episode: Episode, timeout_s: float) -> None:
        self._command = command
        self._episode = episode
        self._timeout_s = timeout_s
        self._served = ServedRun()
        self._inner = ServedSession(self._served)
        self._stack = AsyncExitStack()
        self._process: asyncio.subprocess.Process | None = None
        self._watch: asyncio.Task[None] | None = None
        self._stderr: IO[bytes] | None = None
        self._timed_out = False

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """Start serving on the first call; then each turn is the agent's next call."""
        if self._process is None:
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
        self._stderr = self._stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
        lifeline = self._stack.enter_context(_Lifeline())
        self._process = await asyncio.create_subprocess_exec(
            *guarded(shlex.split(self._command)),
            stdin=lifeline.reader,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=self._stderr,
            env=os.environ | agent_environment(self._episode, url),
            start_new_session=True,  # its own process group, ended as one with the run
        )
        lifeline.hand_over()  # the guard's copy is then the only reading end
        self._watch = asyncio.create_task(self._watch_process(self._process))

    async def _watch_process(self, process: asyncio.subprocess.Process) -> None:
        try:
            code = await asyncio.wait_for(process.wait(), self._timeout_s)
        except TimeoutError:
            self._timed_out = True
            self._served.stall(f"agent command timed out after {self._timeout_s:g} s")
            return
        if code == 0:
            self._served.finish(None)  # exited without `finish`: no final message
        else:
            self._served.fail(f"agent command exited with code {code}: {self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(no output on stderr)"

    async def aclose(self) -> None:
        """Refuse further calls, end the agent's process group, stop serving.

        A finished agent gets `EXIT_GRACE_S` to exit by itself; a timed-out one none.
        """
        await self._inner.aclose()
        if self._process is not None:
            await _end_group(self._process, 0.0 if self._timed_out else EXIT_GRACE_S)
        if self._watch is not None:
            self._watch.cancel()
        await self._stack.aclose()


class McpCommandAgent(AgentDefaults):
    """An external MCP-client program as the model under audit (`--agent mcp[:NAME]`)."""

    simulated = False

    def __init__(
        self, command: str, name: str | None = None, timeout_s: float = AGENT_TIMEOUT_S
    ) -> None:
        timeout_s = checked_seconds(timeout_s, "--agent-timeout")
        argv = shlex.split(command)
        if not argv:
            raise KauditError("--agent mcp needs --agent-command: the MCP-client agent to start")
        if shutil.which(argv[0]) is None:
            raise KauditError(f"--agent-command: program {argv[0]!r} not found")
        self.command = command
        self.timeout_s = timeout_s
        self.name = f"mcp:{name or os.path.basename(argv[0])}"

    def start(self, episode: Episode) -> McpCommandSession:
        """Begin one run; the server and the process start with its first turn."""
        return McpCommandSession(self.command, episode, self.timeout_s)

    def describe(self) -> dict[str, Any]:
        """Configuration for the manifest."""
        return {"kind": "mcp", "command": self.command, "timeout_s": self.timeout_s}


def build_mcp_agent(argument: str, options: dict[str, Any]) -> McpCommandAgent:
    """Agent-registry builder for `mcp` and `mcp:NAME` (entry point `kaudit.agents`)."""
    command = options.get("agent_command")
    if not command:
        raise KauditError("--agent mcp needs --agent-command: the MCP-client agent to start")
    timeout = options.get("agent_timeout")
    return McpCommandAgent(
        str(command), argument or None, AGENT_TIMEOUT_S if timeout is None else timeout
    )


GUARD = Path(__file__).with_name("_guard.py")
"""The agent's guard, started by path: ends the agent's group if kaudit dies (`_guard`)."""


def guarded(argv: list[str]) -> list[str]:
    """The command line that runs `argv` under its guard, in this interpreter."""
    return [sys.executable, "-I", str(GUARD), *argv]


class _Lifeline:
    """A pipe whose reading end is the guard's stdin and whose writing end is kaudit's life.

    The writing end is held by this process only (non-inheritable, never written to): it
    closes when the run's exit stack unwinds, after the group has been ended, or when the
    kernel ends kaudit; either way the guard sees end of file and kills the group.
    """

    def __init__(self) -> None:
        self.reader, self._writer = os.pipe()
        self._reader_open = True

    def hand_over(self) -> None:
        """Close kaudit's copy of the reading end once the guard holds its own."""
        if self._reader_open:
            self._reader_open = False
            os.close(self.reader)

    def __enter__(self) -> _Lifeline:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.hand_over()  # still kaudit's if the guard could not be started
        os.close(self._writer)


async def _end_group(process: asyncio.subprocess.Process, grace_s: float) -> None:
    """Wait `grace_s` for the process to exit, then SIGTERM, then SIGKILL its group.

    Whatever the leader did, members of its group still alive (a shell's children) are
    killed at the end: nothing a run started outlives it.
    """
    if process.returncode is None and grace_s > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace_s)
    if process.returncode is None:
        _signal_group(process, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), EXIT_GRACE_S)
        except TimeoutError:
            _signal_group(process, signal.SIGKILL)
            await process.wait()
    _signal_group(process, signal.SIGKILL)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)  # the group's id is the leader's pid (a new session)
