"""Executors: how the runs of a campaign are scheduled. Local asyncio pool by default."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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


JobRunner = Callable[[RunJob], Awaitable[RunResult]]
OnResult = Callable[[RunResult], None]


@runtime_checkable
class Executor(Protocol):
    """Runs jobs and hands each result to `on_result` on the caller's thread as it finishes."""

    async def execute(self, jobs: Sequence[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run every job; `on_result` records each one before the next is reported."""
        ...


class LocalExecutor:
    """Concurrent runs in this process under a bound; results recorded as they finish."""

    def __init__(self, concurrency: int = 8) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency

    async def execute(self, jobs: Sequence[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run jobs with at most `concurrency` in flight."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(job: RunJob) -> None:
            async with gate:
                on_result(await run(job))

        async with asyncio.TaskGroup() as group:
            for job in jobs:
                group.create_task(one(job))
