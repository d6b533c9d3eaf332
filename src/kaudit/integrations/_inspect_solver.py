"""Inspect AI's model and tool loop driving one fresh kaudit sandbox per sample and epoch.

Each tool Inspect's model calls goes through `ServedRun.call`, so it is executed and
recorded by kaudit's harness (`run_pipeline`, its gateway) exactly like a kaudit agent's call;
the run's record, built by the harness, rides in the sample's store to the scorer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.model import ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolParams

from kaudit.harness import offered_tools, run_seed
from kaudit.serve import ServedRun, start_served_run
from kaudit.suites import Suite

RECORD_KEY = "kaudit_record"
"""Where the solver leaves the run's record (`RunRecord.model_dump(mode="json")`)."""
CAMPAIGN = "inspect"


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


async def _model_loop(state: TaskState, generate: Generate, served: ServedRun) -> TaskState:
    """Inspect's own generate/tool rounds until the model stops calling or the run is over."""
    while not served.over:
        state = await generate(state, tool_calls="single")
        if not state.output.message.tool_calls or state.completed:
            break
    return state


@solver
def sandboxed_agent(suite: Suite) -> Solver:
    """Run the sample's task on a fresh sandbox with Inspect's model; record it like kaudit."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
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
        state.messages.insert(0, ChatMessageSystem(content=task.system_prompt))
        state.tools = served_tools(served, specs)
        try:
            state = await _model_loop(state, generate, served)
        finally:
            served.finish((state.output.completion or None) if state.output else None)
            result = await run
        state.store.set(RECORD_KEY, result.record.model_dump(mode="json"))
        return state

    return solve
