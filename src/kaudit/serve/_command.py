"""`--agent command[:NAME]`: an external program, with its own tools, is the agent of each run.

The command gets the run's world in its environment and acts on it with its own code:

- `KAUDIT_DB_PATH` (SQLite: the world file) and `KAUDIT_DATABASE_URL` (`sqlite:////…`,
  or on PostgreSQL the run's own database), `KAUDIT_RUN_DIR` (its private directory);
- `KAUDIT_TASK_PROMPT`, `KAUDIT_SYSTEM_PROMPT`, `KAUDIT_TASK_ID`, `KAUDIT_RUN_ID`,
  `KAUDIT_SEED`: what it is asked and which run this is;
- whatever the run's doors add (a wire proxy's URL instead of the database's, a model
  proxy's base URL).

The run ends when the command exits (a non-zero exit is an `errored` run) or at the
timeout (a `stalled` run). What it printed on stdout is its final answer (a line
starting with the task's refusal token declares a refusal), unless a door in front of
its model saw the final message itself. Its process group is ended with the run; its doors are then
closed and what they saw, with the last 64 KiB of its stdout and stderr, goes into the
run's record (`CommandAgent.run_facts`).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from collections.abc import Sequence
from typing import Any, TypeVar

from kaudit._require import require_seconds
from kaudit.agents import AgentDefaults, Episode, Observation, RunFacts, Turn, register_agent
from kaudit.errors import AgentError, AgentStalledError, InputError
from kaudit.serve._doors import (
    DOORS,
    Door,
    DoorEvidence,
    DoorFactory,
    HandedWorld,
    WatchedDoor,
    close_doors,
    described_doors,
    doors_for,
    open_doors,
)
from kaudit.serve._process import EXIT_GRACE_S, AgentProcess, Exit
from kaudit.serve._reach import FileReach, ServerReach
from kaudit.serve._timeouts import AGENT_TIMEOUT_S
from kaudit.serve._tooldoor import tool_doors


def task_environment(episode: Episode) -> dict[str, str]:
    """What the agent is asked and which run this is, as environment variables."""
    return {
        "KAUDIT_TASK_PROMPT": episode.task.prompt,
        "KAUDIT_SYSTEM_PROMPT": episode.task.system_prompt,
        "KAUDIT_TASK_ID": episode.task.id,
        "KAUDIT_RUN_ID": episode.run_id,
        "KAUDIT_SEED": str(episode.seed),
    }


class CommandRun:
    """One run's agent process with the world and the doors around it.

    Shared by the plain command agent and the MCP one: the world's variables, then each
    door's, on top of kaudit's environment; the doors closed after the process group
    has ended; the evidence they and the process left kept as the run's facts.
    """

    def __init__(
        self,
        command: str,
        episode: Episode,
        doors: Sequence[DoorFactory] = (),
        *,
        watch_server: bool = False,
    ) -> None:
        self.episode = episode
        self.world = None if episode.world is None else HandedWorld.of(episode)
        self.process = AgentProcess(command, {})
        self._factories = tuple(doors)
        self._doors: list[Door] = []
        self._file = (
            None
            if self.world is None or self.world.db_path is None
            else FileReach(self.world.db_path)
        )
        self._server = (
            ServerReach(self.world.database_url)
            if watch_server and self.world is not None and self.world.on_server
            else None
        )
        self._ended: DoorEvidence | None = None

    async def start(self, variables: dict[str, str] | None = None) -> None:
        """Open the doors and start the command with every variable; raises `AgentError`."""
        environment = os.environ | task_environment(self.episode) | (variables or {})
        if self.world is not None:
            self._doors = doors_for(self.world, self._factories)
            environment |= self.world.environment()
            environment |= await open_doors(self._doors, self.world)
            if self._file is not None:
                self._file.arm()
            if self._server is not None:
                await self._server.arm()
        self.process.environment = environment
        try:
            await self.process.start()
        except OSError as exc:
            raise AgentError(f"agent command cannot be started: {exc}") from exc

    def _watched(self) -> list[WatchedDoor]:
        return [door for door in self._doors if isinstance(door, WatchedDoor)]

    async def wait(self, timeout_s: float) -> Exit:
        """Wait for the command to exit, at most `timeout_s`, or until a door stops the run.

        A stopped run's exit is not known yet; `stop_reason` says why it was stopped.
        """
        stops = [asyncio.create_task(door.stopping.wait()) for door in self._watched()]
        waiting = asyncio.create_task(self.process.wait(timeout_s))
        try:
            await asyncio.wait([waiting, *stops], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in stops:
                task.cancel()
        if waiting.done():
            return waiting.result()
        waiting.cancel()
        return Exit(None, timed_out=False)

    def stop_reason(self) -> str | None:
        """Why a door ended the run early (a spent budget), if one did."""
        return next((d.stop_reason for d in self._watched() if d.stop_reason), None)

    def last_message(self) -> str | None:
        """The model's last reply so far, as a watched door saw it."""
        return next((m for d in self._watched() if (m := d.last_message()) is not None), None)

    async def end(self, grace_s: float = EXIT_GRACE_S) -> DoorEvidence:
        """End the group, close the doors, say what the run left (later calls repeat it).

        An agent a door stopped gets no grace: its budget is already spent.
        """
        if self._ended is not None:
            return self._ended
        await self.process.end(0.0 if self.stop_reason() else grace_s)
        evidence = DoorEvidence()
        try:
            evidence.merge(await close_doors(self._doors))
        finally:
            reached = await self._reached()
            if evidence.reached is not None:  # a door that knows beats the watchers
                reached = evidence.reached or (self._file is not None and self._file.reached())
            evidence.extra["agent"] = self.process.output() | {"world_reached": reached}
            self._ended = evidence
        return evidence

    async def _reached(self) -> bool:
        seen = self._file is not None and self._file.reached()
        if self._server is not None:
            seen = await self._server.stop() or seen
        return seen


class CommandSession:
    """One run of a command agent: its single turn waits for the command to end."""

    def __init__(self, agent: CommandAgent, episode: Episode) -> None:
        self._agent = agent
        self._run = CommandRun(agent.command, episode, agent.doors, watch_server=agent.watch_reach)

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """Run the command to its end; its exit decides how the run ended."""
        run = self._run
        await run.start()
        ended = await run.wait(self._agent.timeout_s)
        evidence = await self._finish()
        if evidence.stalled:
            raise AgentStalledError(evidence.stalled)
        if ended.timed_out:
            raise AgentStalledError(f"agent command timed out after {self._agent.timeout_s:g} s")
        if ended.code != 0:
            raise AgentError(
                f"agent command exited with code {ended.code}: {run.process.stderr_line()}"
            )
        answer = run.process.stdout.text().strip() or None  # what it printed is its answer
        return Turn(content=evidence.finish_message or evidence.final_message or answer)

    async def _finish(self) -> DoorEvidence:
        evidence = await self._run.end()
        self._agent.keep(self._run.episode.run_id, evidence)
        return evidence

    async def aclose(self) -> None:
        """End the command and close the doors if the run ended another way."""
        await self._finish()


class ProgramAgent(AgentDefaults):
    """An external program started once per run (`command` and `mcp` agents share this).

    `kind` names the agent kind; what a run's doors and process left is kept per run
    and handed to the record once (`run_facts`).
    """

    kind = "command"
    simulated = False
    reaches_world = True
    world_required = True

    def __init__(
        self,
        command: str,
        name: str | None = None,
        timeout_s: float = AGENT_TIMEOUT_S,
        doors: Sequence[DoorFactory] = (),
    ) -> None:
        self.command = command
        self.timeout_s = require_seconds("timeout_s", timeout_s)
        self.name = f"{self.kind}:{name or program_name(command, self.kind)}"
        self.doors = tuple(doors)
        """The doors this agent's configuration adds to every run (tools, model)."""
        self.watch_reach = False
        """Look at the server's sessions during each run (the preflight turns it on)."""
        self._facts: dict[str, RunFacts] = {}

    def enforces_identity(self, on_server: bool) -> bool:
        """Whether a door promises to enforce identities on a server's database.

        A SQLite file enforces nothing, whatever stands in front of it; nor does a server
        behind a door whose own program writes as the owner (the tool door).
        """
        factories = (*DOORS, *self.doors)
        if any(getattr(f, "bypasses_identity", False) for f in factories):
            return False
        return on_server and any(getattr(f, "enforces_identity", False) for f in factories)

    def keep(self, run_id: str, evidence: DoorEvidence) -> None:
        """Keep what run `run_id`'s doors and process left, for `run_facts`."""
        self._facts[run_id] = evidence.facts()

    def run_facts(self, run_id: str) -> RunFacts | None:
        """What the run's doors and process left (taken once)."""
        return self._facts.pop(run_id, None)

    def describe(self) -> dict[str, Any]:
        """Configuration for the manifest, with the doors it adds (its tools' server)."""
        entry = {"kind": self.kind, "command": self.command, "timeout_s": self.timeout_s}
        doors = described_doors(self.doors)
        return entry | {"doors": doors} if doors else entry


class CommandAgent(ProgramAgent):
    """An external program with its own tools as the agent under audit (`--agent command`)."""

    def start(self, episode: Episode) -> CommandSession:
        """Begin one run; the command starts with its first turn."""
        return CommandSession(self, episode)


def program_name(command: str, kind: str) -> str:
    """The program a command line starts; refused when absent or not on PATH."""
    argv = shlex.split(command)
    if not argv:
        raise InputError(
            "agents", f"names {kind}, which needs `agent_command`: the agent program to start"
        )
    if shutil.which(argv[0]) is None:
        raise InputError("agent_command", f"names a program not found: {argv[0]!r}")
    return os.path.basename(argv[0])


Program = TypeVar("Program", bound=ProgramAgent)


def build_program_agent(kind: type[Program], argument: str, options: dict[str, Any]) -> Program:
    """A `kind` agent from `--agent KIND[:NAME]` and the options `--agent-command` sets."""
    command = options.get("agent_command")
    if not command:
        program_name("", kind.kind)  # refused, naming the missing option
    timeout = options.get("agent_timeout")
    return kind(
        str(command),
        argument or None,
        AGENT_TIMEOUT_S if timeout is None else timeout,
        doors=(*tool_doors(options), *(options.get("upstream") or ())),
    )


@register_agent("command")
def build_command_agent(argument: str, options: dict[str, Any]) -> CommandAgent:
    """Agent-registry builder for `command` and `command:NAME` (entry point `kaudit.agents`)."""
    return build_program_agent(CommandAgent, argument, options)
