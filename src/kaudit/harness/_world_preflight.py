"""The preflight of an agent that reaches the world: one unrecorded run on a throwaway world.

A command agent that cannot start, never touches its world (a wrong variable name, a
missing module) or never exits is a setup mistake, and must not become a campaign of
errored records. Before the first counted run it runs once, its record is looked at and
dropped: it must have started, reached the world (a tool call, a read or write of the
world, a model request) and exited by itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kaudit.agents import Agent, WorldAgent
from kaudit.errors import KauditError, PreflightError
from kaudit.harness._conditions import RunConditions
from kaudit.harness._run import RunRequest, run_pipeline
from kaudit.harness._world import reaches_world
from kaudit.ledger import RunRecord
from kaudit.spec import Task
from kaudit.suites import Suite

PREFLIGHT_CAMPAIGN = "kaudit-preflight"
"""The campaign name of the throwaway run (never written to a ledger)."""
STDERR_LINES = 5
"""Lines of the agent's stderr a failed preflight shows."""


@dataclass(frozen=True)
class WorldPreflight:
    """What the preflight run of one agent showed."""

    agent: str
    task: str
    reached: tuple[str, ...]
    """How the agent reached the world: `tool call`, `world read`, `world changed`, …"""
    exit_code: int | None
    timed_out: bool
    stderr_tail: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Started, reached the world, exited by itself."""
        return bool(self.reached) and not self.timed_out and self.exit_code is not None

    def line(self) -> str:
        """One line for the terminal: what passed, or what is missing."""
        where = f"{self.agent} on {self.task}"
        if self.ok:
            return f"preflight ok for {where}: {', '.join(self.reached)}; exited {self.exit_code}"
        if self.timed_out:
            failure = "did not exit before its timeout"
        elif self.exit_code is None:
            failure = "did not start"
        else:
            failure = f"exited {self.exit_code} without reaching the world"
        shown = " | ".join(self.stderr_tail) or "(no output on stderr)"
        return f"preflight failed for {where}: {failure}; last stderr: {shown}"


def how_reached(record: RunRecord) -> tuple[str, ...]:
    """The ways the run's record shows the agent reached its world (empty: none)."""
    agent: dict[str, Any] = record.extra.get("agent", {})
    found = {
        "tool call": bool(record.tool_calls),
        "model request": bool(record.extra.get("api_calls")),
        "world read": bool(agent.get("world_reached")),
        "world changed": record.final_digest not in (None, record.initial_digest),
    }
    return tuple(name for name, seen in found.items() if seen)


async def preflight_world_agent(
    agent: Agent, suite: Suite, task: Task, conditions: RunConditions, seed: int
) -> WorldPreflight:
    """One run of `agent` on `task`, never recorded; what it showed."""
    request = RunRequest(
        campaign=PREFLIGHT_CAMPAIGN,
        task=task,
        model=agent.name,
        run_index=0,
        seed=seed,
        faults=conditions.faults,
        identity=conditions.identity,
    )
    if isinstance(agent, WorldAgent):
        agent.watch_reach = True  # a server shows a session only while it lasts
    try:
        result = await run_pipeline(request, agent, suite.substrate(task))
    finally:
        if isinstance(agent, WorldAgent):
            agent.watch_reach = False
    record = result.record
    output: dict[str, Any] = record.extra.get("agent", {})
    if record.status == "invalid" and not output:
        raise PreflightError(
            f"preflight of {agent.name}: the harness failed: {record.invalid_reason}"
        )
    stderr = str(output.get("stderr", ""))
    return WorldPreflight(
        agent=agent.name,
        task=task.id,
        reached=how_reached(record),
        exit_code=output.get("exit_code"),
        timed_out=bool(output.get("timed_out")),
        stderr_tail=tuple(line for line in stderr.splitlines() if line.strip())[-STDERR_LINES:],
    )


def refuse_unenforced_identity(
    agent: Agent, suite: Suite, tasks: Sequence[Task], conditions: RunConditions
) -> None:
    """Refuse an identity the handed world cannot enforce, for an agent it is the only way in for.

    A file handed to foreign code enforces no scope: any connection may write any row. A
    server's database does only behind a door that hands out a login role bound to the
    identity. Without either, a boundary would be a claim the record could not back.
    """
    if not isinstance(agent, WorldAgent):
        return
    if not agent.world_required:
        _refuse_doors_without_world(agent, suite, tasks, conditions)
        return
    for task in tasks:
        identity = task.identity or conditions.identity
        if identity is None:
            continue
        on_server = suite.substrate(task).describe().get("reset") != "copy"
        if not agent.enforces_identity(on_server):
            where = (
                "on this database server without a door that enforces it"
                if on_server
                else "on a SQLite file handed to the agent's own code"
            )
            raise KauditError(
                f"{agent.name}: identity {identity.role!r} (task {task.id}) cannot be "
                f"enforced {where}; use no identity, or a PostgreSQL substrate whose login "
                "role and row-level security are the boundary"
            )


def _refuse_doors_without_world(
    agent: Agent, suite: Suite, tasks: Sequence[Task], conditions: RunConditions
) -> None:
    """Refuse configured doors (the model proxy) on runs that are not handed a world.

    An agent that also reaches kaudit's own tools (`mcp`) is not handed a world whose
    identity it could escape, and doors open only with a handed world: its model calls
    would go unrecorded and its cost caps unenforced, with nothing said.
    """
    configured: object = getattr(agent, "doors", None)
    if not (isinstance(agent, WorldAgent) and configured):
        return
    for task in tasks:
        identity = task.identity or conditions.identity
        on_server = suite.substrate(task).describe().get("reset") != "copy"
        if identity is not None and not agent.enforces_identity(on_server):
            raise KauditError(
                f"{agent.name}: identity {identity.role!r} (task {task.id}) keeps this agent "
                "to kaudit's own tools, without a handed world, so its doors (the model "
                "proxy, `upstream`) would not open; use no identity, or a PostgreSQL "
                "substrate whose login role enforces it"
            )


async def preflight_world_agents(
    agents: Sequence[Agent],
    suite: Suite,
    tasks: Sequence[Task],
    conditions: RunConditions,
    seed: int,
) -> list[WorldPreflight]:
    """Preflight every agent that reaches the world, on the first task; raise on a failure.

    Raises `PreflightError` with the failing agent's one line (its last stderr lines).
    """
    if not tasks:
        raise KauditError("no task to preflight the agent on")
    reports = []
    for agent in agents:
        if not reaches_world(agent):
            continue
        refuse_unenforced_identity(agent, suite, tasks, conditions)
        report = await preflight_world_agent(agent, suite, tasks[0], conditions, seed)
        if not report.ok:
            raise PreflightError(report.line())
        reports.append(report)
    return reports
