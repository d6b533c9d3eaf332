"""One run: seed a fresh sandbox, drive the agent through the tools, dump, label."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from kaudit.agents import Agent, Episode, Observation, ToolCall, Turn, Usage
from kaudit.errors import AgentError, InvalidRunError, KauditError
from kaudit.label import RunMeta, Termination, Verdict, decimal_to_json, label_run, last_message
from kaudit.ledger import RunRecord, RunTiming
from kaudit.spec import Task
from kaudit.substrate import Sandbox, StateDump, Substrate, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class RunResult:
    """A finished run: its record and, when kept, its final state image."""

    record: RunRecord
    final_image: bytes | None
    verdict: Verdict | None


@dataclass
class _Loop:
    """What the agent loop accumulates."""

    termination: Termination = "completed"
    final_message: str | None = None
    agent_error: str | None = None
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0

    def __post_init__(self) -> None:
        self.transcript: list[dict[str, Any]] = []
        self.tool_calls: list[dict[str, Any]] = []

    def add_usage(self, turn: Turn) -> None:
        self.input_tokens += turn.usage.input_tokens
        self.output_tokens += turn.usage.output_tokens
        self.cost_usd += turn.usage.cost_usd
        self.retries += turn.usage.retries


def run_id(campaign: str, model: str, task: str, run_index: int) -> str:
    """The id a run is known by to its sandbox, its agent and a serving stack's logs."""
    return f"{campaign}/{model}/{task}/{run_index}"


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def offered_tools(task: Task, substrate: Substrate) -> dict[str, Tool]:
    """Exactly the tools the task selects; a missing one is a suite error, not a run."""
    missing = [name for name in task.tools if name not in substrate.tools]
    if missing:
        raise KauditError(f"task {task.id}: substrate {substrate.name} has no tool {missing}")
    return {name: substrate.tools[name] for name in task.tools}


def call_tool(tools: dict[str, Tool], ctx: ToolContext, call: ToolCall) -> ToolResult:
    """Execute one call; unknown tools and malformed arguments go back to the agent as errors."""
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(ok=False, error=f"unknown tool {call.name!r}; available: {sorted(tools)}")
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolResult(ok=False, error=f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(arguments, dict):
        return ToolResult(ok=False, error="arguments must be a JSON object")
    return tool.call(ctx, arguments)


async def drive(agent: Agent, episode: Episode, tools: dict[str, Tool], sandbox: Sandbox) -> _Loop:
    """The agent loop under the task's step budget."""
    loop = _Loop()
    ctx = ToolContext(db=sandbox.db)
    session = agent.start(episode)
    observations: list[Observation] = []
    try:
        for _ in range(episode.task.max_steps):
            try:
                turn = await session.next_turn(observations)
            except AgentError as exc:
                loop.termination, loop.agent_error = "errored", str(exc)
                if isinstance(exc.usage, Usage):
                    loop.add_usage(Turn(usage=exc.usage))
                return loop
            loop.steps += 1
            loop.add_usage(turn)
            loop.transcript.append(
                {
                    "content": turn.content,
                    "tool_calls": [
                        {"id": c.id, "name": c.name, "arguments": c.arguments}
                        for c in turn.tool_calls
                    ],
                    "stalled": turn.stalled,
                }
            )
            if turn.stalled:
                continue
            if not turn.tool_calls:
                loop.final_message = turn.content
                return loop
            observations = []
            for call in turn.tool_calls:
                result = call_tool(tools, ctx, call)
                loop.tool_calls.append(
                    {"id": call.id, "name": call.name, "arguments": call.arguments}
                    | {
                        "result": result.to_json(),
                        "tag": tools[call.name].tag if call.name in tools else None,
                    }
                )
                observations.append(Observation(call=call, ok=result.ok, text=result.to_text()))
        loop.termination = "stalled"
        return loop
    finally:
        await session.aclose()


async def execute_run(
    *,
    campaign: str,
    task: Task,
    agent: Agent,
    substrate: Substrate,
    run_index: int,
    seed: int,
    restarted: int = 0,
    keep_dump: bool = False,
    fast_diff: bool = True,
) -> RunResult:
    """Run one (model, task, run index) end to end and return its record.

    A harness failure (seeding, dump) makes the run INVALID with the reason; it is
    recorded, never counted, and never turned into an agent score.
    """
    started = time.perf_counter()
    key = {"campaign": campaign, "model": agent.name, "task": task.id, "run_index": run_index}
    this_run = run_id(campaign, agent.name, task.id, run_index)
    tools = offered_tools(task, substrate)
    t0 = time.perf_counter()
    try:
        sandbox = substrate.seed(this_run)
    except KauditError as exc:
        return invalid_result(key, seed, restarted, f"seed failed: {exc}", total_ms=_ms(started))
    seed_ms = _ms(t0)
    episode = Episode(
        task=task, run_id=this_run, seed=seed, tool_specs=tuple(t.spec() for t in tools.values())
    )
    final: StateDump | None = None
    t0 = time.perf_counter()
    try:
        loop = await drive(agent, episode, tools, sandbox)
        agent_ms = _ms(t0)
        t0 = time.perf_counter()
        try:
            final = sandbox.dump()
        except KauditError:
            final = None
        dump_ms = _ms(t0)
    finally:
        sandbox.close()
    t0 = time.perf_counter()
    meta = RunMeta(loop.termination, loop.final_message, task.refusal_token,
                   last_message(loop.transcript), task.convention)  # fmt: skip
    try:
        verdict: Verdict | None = label_run(
            sandbox.initial.image,
            None if final is None else final.image,
            task.damage,
            task.checks,
            task.params,
            meta,
            volatile=substrate.volatile,
            fast=fast_diff,
        )
        invalid_reason = None
    except InvalidRunError as exc:
        verdict, invalid_reason = None, str(exc)
    label_ms = _ms(t0)
    timing = RunTiming(
        seed_ms=seed_ms,
        agent_ms=agent_ms,
        dump_ms=dump_ms,
        label_ms=label_ms,
        total_ms=_ms(started),
    )
    record = RunRecord(
        **key,
        seed=seed,
        status="labeled" if verdict else "invalid",
        invalid_reason=invalid_reason,
        outcome=verdict.outcome if verdict else None,
        sub_label=verdict.sub_label if verdict else None,
        counts_as_damage=bool(verdict and verdict.counts_as_damage),
        counts_as_damage_upper=bool(verdict and verdict.counts_as_damage_upper),
        success=bool(verdict and verdict.success),
        severity=verdict.severity if verdict else None,
        dollars=decimal_to_json(verdict.dollars) if verdict else None,
        verdict=verdict.to_json() if verdict else None,
        termination=loop.termination,
        agent_error=loop.agent_error,
        final_message=loop.final_message,
        transcript=loop.transcript,
        tool_calls=loop.tool_calls,
        steps=loop.steps,
        input_tokens=loop.input_tokens,
        output_tokens=loop.output_tokens,
        cost_usd=loop.cost_usd,
        retries=loop.retries,
        restarted=restarted,
        timing=timing,
        initial_digest=sandbox.initial.digest,
        final_digest=final.digest if final else None,
        extra={"simulated": agent.simulated},
    )
    return RunResult(record, final.image if (final and keep_dump) else None, verdict)


def invalid_result(
    key: dict[str, Any],
    seed: int,
    restarted: int,
    reason: str,
    *,
    total_ms: float = 0.0,
    extra: dict[str, Any] | None = None,
) -> RunResult:
    """A run the harness could not complete: recorded INVALID with its reason, never scored."""
    record = RunRecord(
        **key,
        seed=seed,
        status="invalid",
        invalid_reason=reason,
        termination="errored",
        restarted=restarted,
        timing=RunTiming(total_ms=total_ms),
        extra=extra or {},
    )
    return RunResult(record, None, None)
