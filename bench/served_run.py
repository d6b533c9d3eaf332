"""Served runs: an external agent's calls through `ServedRun` against kaudit's own loop.

Both replay the oracle of one built-in task on a fresh sandbox per run, end to end (seed,
calls, dump, label, record), in this process: the baseline with `ScriptedAgent` (the
harness pulls turns), the served run with the calls pushed through `ServedRun.call`, as
the MCP server and the Inspect solver do. Prints the median per-run milliseconds of each
and their ratio: the cost of turning the loop around, without any transport.

    python bench/served_run.py [--runs 50] [--task billing/invoice-delete-drafts] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.serve import ServedRun, start_served_run
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites import load_suite


async def scripted_run(task: Task, substrate: Substrate) -> str | None:
    agent = ScriptedAgent()
    request = RunRequest(campaign="b", task=task, model=agent.name, run_index=0, seed=0)
    result = await run_pipeline(request, agent, substrate)
    return result.record.outcome


async def served_run(task: Task, substrate: Substrate) -> str | None:
    served = ServedRun()
    run = start_served_run(
        served, name="bench", task=task, substrate=substrate, campaign="b", run_index=0, seed=0
    )
    final = None
    for step in task.oracle:
        for call in step.tool_calls:
            await served.call(call.name, dict(call.arguments))
        if not step.tool_calls and step.content is not None:
            final = step.content
    served.finish(final)
    return (await run).record.outcome


def median_ms(fn: object, task: Task, substrate: Substrate, runs: int) -> tuple[float, set[str]]:
    times, outcomes = [], set()
    for _ in range(runs):
        start = time.perf_counter()
        outcomes.add(str(asyncio.run(fn(task, substrate))))  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times), outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--task", default="billing/invoice-delete-drafts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suite = load_suite("builtin")
    task = suite.tasks[args.task]
    substrate = suite.substrate(task)
    median_ms(scripted_run, task, substrate, 3)  # warm the template cache and imports
    base, base_outcomes = median_ms(scripted_run, task, substrate, args.runs)
    served, served_outcomes = median_ms(served_run, task, substrate, args.runs)
    result = {
        "task": args.task,
        "runs": args.runs,
        "scripted_ms": round(base, 3),
        "served_ms": round(served, 3),
        "ratio": round(served / base, 3),
        "outcomes": sorted(base_outcomes | served_outcomes),
    }
    if not args.json:
        print(
            f"{args.task}, {args.runs} runs each: scripted {base:.2f} ms/run, "
            f"served {served:.2f} ms/run, ratio {served / base:.2f}"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
