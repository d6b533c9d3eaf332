"""Executors: how the runs of a campaign are scheduled. Local asyncio pool by default."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kaudit.harness._run import RunResult


@dataclass(frozen=True)
class RunJob:
    """One run to execute; everything needed to reproduce it is in here."""

    campaign: str
    model: str
    task: str
    run_index: int
    seed: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The ledger key."""
        return (self.campaign, self.model, self.task, self.run_index)


JobRunner = Callable[[RunJob], Awaitable[RunResult | None]]
"""Runs one job; None means the job was not started (its cell's stopping rule held)."""
OnResult = Callable[[RunResult], None]


@runtime_checkable
class Executor(Protocol):
    """Runs jobs and hands each result to `on_result` on the caller's thread as it finishes."""

    def describe(self) -> dict[str, Any]:
        """What the executor is, for the campaign manifest."""
        ...

    async def execute(self, jobs: Sequence[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run every job; `on_result` records each one before the next is reported."""
        ...


class LocalExecutor:
    """Concurrent runs in this process under a bound; results recorded as they finish.

    `model_caps` bounds one model's runs in flight (a provider's rate limit) without
    holding back other models: each model has its own dispatcher, and only runs that
    hold a slot exist as tasks, so a 100,000-run campaign costs no more memory than
    `concurrency` runs.
    """

    def __init__(self, concurrency: int = 8, model_caps: Mapping[str, int] | None = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if any(cap < 1 for cap in (model_caps or {}).values()):
            raise ValueError("a model cap must be at least 1")
        self.concurrency = concurrency
        self.model_caps = dict(model_caps or {})

    def describe(self) -> dict[str, Any]:
        """The executor for the campaign manifest."""
        return {"kind": "local", "concurrency": self.concurrency, "model_caps": self.model_caps}

    async def execute(self, jobs: Sequence[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run jobs with at most `concurrency` in flight (and a model's cap for each model)."""
        gate = asyncio.Semaphore(self.concurrency)
        by_model: dict[str, list[RunJob]] = {}
        for job in jobs:
            by_model.setdefault(job.model, []).append(job)

        async def one(job: RunJob, model_gate: asyncio.Semaphore | None) -> None:
            try:
                result = await run(job)
                if result is not None:
                    on_result(result)
            finally:
                gate.release()
                if model_gate is not None:
                    model_gate.release()

        async def dispatch(model_jobs: list[RunJob], cap: int | None) -> None:
            model_gate = asyncio.Semaphore(cap) if cap else None
            for job in model_jobs:
                if model_gate is not None:
                    await model_gate.acquire()
                await gate.acquire()
                group.create_task(one(job, model_gate))

        async with asyncio.TaskGroup() as group:
            for model, model_jobs in by_model.items():
                group.create_task(dispatch(model_jobs, self.model_caps.get(model)))
