"""One fresh kaudit sandbox per Inspect sample and epoch, for any Inspect solver.

The sandbox is opened by a setup step (`kaudit_sandbox`), which Inspect runs even when
the task's solver is replaced (`--solver`, `eval(..., solver=...)`), so the agent can be
kaudit's default tool loop, Inspect's `react()`, or a third-party agent behind Inspect's
agent bridge. Each tool the agent calls goes through `ServedRun.call`, so it is executed
and recorded by kaudit's harness (`run_pipeline`, its gateway) exactly like a kaudit
agent's call. The run ends when it is first scored (`finished_record`): the record,
built by the harness, then rides in the sample's store to every kaudit scorer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolParams, ToolSource
from inspect_ai.util import store

from kaudit.errors import KauditError
from kaudit.harness import RunResult
from kaudit.harness._run import offered_tools
from kaudit.harness._seeds import run_seed
from kaudit.integrations._inspect_tiktoken import ensure_o200k_cache
from kaudit.serve import ServedRun, start_served_run
from kaudit.suites import Suite

RECORD_KEY = "kaudit_record"
"""Where the run's record lands (`RunRecord.model_dump(mode="json")`) once it is scored."""
SANDBOX_KEY = "kaudit_sandbox"
"""Where the setup step leaves the key of the sample's open sandbox."""
CAMPAIGN = "inspect"


@dataclass
class _Sandbox:
    """A sample's served run while it is open: its calls, tools and background run."""

    served: ServedRun
    run: asyncio.Task[RunResult]
    tools: list[Tool]


_OPEN: dict[str, _Sandbox] = {}
"""Open sandboxes by sample uuid (Inspect's store holds only JSON, not a live run)."""


def _caller(served: ServedRun, name: str) -> Callable[..., Awaitable[str]]:
    async def execute(**kwargs: Any) -> str:
        reply = await served.call(name, kwargs)
        return reply.text  # an error reply is text the model reads, as in kaudit's own loop

    return execute


def inspect_parameters(schema: dict[str, Any]) -> ToolParams:
    """The tool's JSON schema for Inspect, which insists on a description per parameter.

    kaudit's schemas come from type hints and carry none, so the parameter's name
    (spaced out) stands in; the types, defaults and required list are unchanged.
    """
    properties = {
        name: {"description": name.replace("_", " ")} | prop
        for name, prop in schema.get("properties", {}).items()
    }
    return ToolParams.model_validate(schema | {"properties": properties})


def served_tools(served: ServedRun, specs: tuple[dict[str, Any], ...]) -> list[Tool]:
    """The task's offered tools as Inspect tools, each forwarding to the served run."""
    return [
        ToolDef(
            _caller(served, spec["name"]),
            name=spec["name"],
            description=spec["description"],
            parameters=inspect_parameters(spec["parameters"]),
        ).as_tool()
        for spec in specs
    ]


@solver
def kaudit_sandbox(suite: Suite) -> Solver:
    """Open the sample's task on a fresh sandbox: system message, tools, a running record.

    Meant as a `Task`'s `setup`. The task's offered tools become `state.tools` (what
    `generate()` offers) and are what `kaudit_tools()` hands to an agent with its own
    tool list, such as `react(tools=[kaudit_tools()])`.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        ensure_o200k_cache()  # Inspect counts tokens with it; offline it cannot download
        task = suite.tasks[str(state.metadata["kaudit_task"])]
        served = ServedRun()
        model = str(state.model)
        run = start_served_run(
            served,
            name=model,
            task=task,
            substrate=suite.substrate(task),
            campaign=CAMPAIGN,
            run_index=state.epoch - 1,
            seed=run_seed(0, model, task.id, state.epoch - 1),
            facts={"via": "inspect_ai"},
        )
        specs = tuple(t.spec() for t in offered_tools(task, suite.substrate(task)).values())
        tools = served_tools(served, specs)
        _OPEN[state.uuid] = _Sandbox(served, run, tools)
        state.store.set(SANDBOX_KEY, state.uuid)
        state.messages.insert(0, ChatMessageSystem(content=task.system_prompt))
        state.tools = list(tools)
        return state

    return solve


class _SampleTools(ToolSource):
    async def tools(self) -> list[Tool]:
        return list(_open_sandbox(store().get(SANDBOX_KEY)).tools)


def kaudit_tools() -> ToolSource:
    """The current sample's sandbox tools, for an agent that takes its own tool list."""
    return _SampleTools()


def _open_sandbox(key: str | None) -> _Sandbox:
    sandbox = _OPEN.get(key or "")
    if sandbox is None:
        raise KauditError(
            "no kaudit sandbox is open for this Inspect sample: use a task whose setup "
            "is kaudit_sandbox(suite), such as kaudit/suite"
        )
    return sandbox


@solver
def tool_loop() -> Solver:
    """The default agent of kaudit/suite: Inspect's generate/tool rounds, one call a round.

    Stops when the model stops calling tools or the run is over (`max_steps`).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        served = _open_sandbox(state.store.get(SANDBOX_KEY)).served
        while not served.over:
            state = await generate(state, tool_calls="single")
            if not state.output.message.tool_calls or state.completed:
                break
        return state

    return solve


async def finished_record(state: TaskState) -> dict[str, Any]:
    """End the sample's run (its final message: the agent's last output) and its record.

    The first scorer to ask ends the run; every later one reads the record from the store.
    """
    record: dict[str, Any] | None = state.store.get(RECORD_KEY)
    if record is not None:
        return record
    sandbox = _open_sandbox(state.store.get(SANDBOX_KEY))
    sandbox.served.finish((state.output.completion or None) if state.output else None)
    result = await sandbox.run
    record = result.record.model_dump(mode="json")
    state.store.set(RECORD_KEY, record)
    return record


async def close_sandbox(state: TaskState) -> None:
    """Task cleanup: forget the sample's sandbox, ending its run if no scorer did.

    A sample that failed before it was scored still ends its run, so no sandbox leaks.
    """
    sandbox = _OPEN.pop(state.uuid, None)
    if sandbox is not None and not sandbox.run.done():
        sandbox.served.finish(None)
        await sandbox.run
