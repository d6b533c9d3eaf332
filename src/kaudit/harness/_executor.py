"""Executors: how the runs of a campaign are scheduled. Local asyncio pool by default."""

from __future__ import annotations

import asyncio
import gc
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kaudit._require import require_at_least
from kaudit._run_key import RunKey
from kaudit.harness._run import RunResult


@dataclass(frozen=True)
class RunJob:
    """One run to execute; everything needed to reproduce it is in here."""

    campaign: str
    model: str
    task: str
    run_index: int
    seed: int
    attempt: int = 0

    @property
    def key(self) -> RunKey:
        """The ledger key of the run."""
        return RunKey(self.campaign, self.model, self.task, self.run_index)


JobRunner = Callable[[RunJob], Awaitable[RunResult | None]]
"""Runs one job; None means the job was not started (its cell's stopping rule held)."""
OnResult = Callable[[RunResult], None]


@runtime_checkable
class Executor(Protocol):
    """Runs jobs and hands each result to `on_result` on the caller's thread as it finishes."""

    def describe(self) -> dict[str, Any]:
        """What the executor is, for the campaign manifest."""
        ...

    async def execute(self, jobs: Iterable[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run every job; `on_result` records each one before the next is reported.

        `jobs` may be a lazy iterator (a campaign generates its jobs as they are needed),
        so an executor takes them one at a time and never materializes the plan.
        """
        ...


class LocalExecutor:
    """Concurrent runs in this process under a bound; results recorded as they finish.

    `model_caps` bounds one model's runs in flight (a provider's rate limit) without
    holding back other models: a job of a model at its cap waits in that model's queue
    while the dispatcher goes on with other models' jobs. Jobs are pulled from the
    iterator only as slots open, and at most `LOOKAHEAD` capped jobs wait in queues
    (a few hundred bytes each), so a 1,000,000,000-run campaign costs no more memory
    than `concurrency` runs.
    """

    LOOKAHEAD = 1024
    """Capped models' jobs held back at most; past it the dispatcher waits for a slot."""

    def __init__(self, concurrency: int = 8, model_caps: Mapping[str, int] | None = None) -> None:
        require_at_least("concurrency", concurrency, 1)
        for cap in (model_caps or {}).values():
            require_at_least("model_caps", cap, 1)
        self.concurrency = concurrency
        self.model_caps = dict(model_caps or {})

    def describe(self) -> dict[str, Any]:
        """The executor for the campaign manifest."""
        return {"kind": "local", "concurrency": self.concurrency, "model_caps": self.model_caps}

    async def execute(self, jobs: Iterable[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Run jobs with at most `concurrency` in flight (and a model's cap for each model)."""
        gate = asyncio.Semaphore(self.concurrency)
        model_gates = {model: asyncio.Semaphore(cap) for model, cap in self.model_caps.items()}
        waiting: dict[str, deque[RunJob]] = {}
        freed = asyncio.Event()

        def has_slot(job: RunJob) -> bool:
            model_gate = model_gates.get(job.model)
            return model_gate is None or not model_gate.locked()

        async def one(job: RunJob, model_gate: asyncio.Semaphore | None) -> None:
            try:
                result = await run(job)
                if result is not None:
                    on_result(result)
            finally:
                gate.release()
                if model_gate is not None:
                    model_gate.release()
                freed.set()

        async def start(job: RunJob) -> None:
            model_gate = model_gates.get(job.model)
            if model_gate is not None:
                await model_gate.acquire()  # free: `has_slot` said so and nothing ran since
            await gate.acquire()
            group.create_task(one(job, model_gate))

        source = iter(jobs)
        exhausted = False
        with frozen_heap():
            async with asyncio.TaskGroup() as group:
                while True:
                    freed.clear()  # before looking, so a slot freed meanwhile is not missed
                    for queue in waiting.values():
                        while queue and has_slot(queue[0]):
                            await start(queue.popleft())
                    queued = sum(len(queue) for queue in waiting.values())
                    if not exhausted and queued < self.LOOKAHEAD:
                        job = next(source, None)
                        if job is None:
                            exhausted = True
                        elif has_slot(job):
                            await start(job)
                        else:
                            waiting.setdefault(job.model, deque()).append(job)
                        continue
                    if exhausted and queued == 0:
                        break
                    await freed.wait()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects alive at the start out of the garbage collector's full passes.

    They are hundreds of thousands (modules, SDK types, the suite) and none is garbage,
    yet each full collection walks them all while every run in flight waits: ~0.2 s per
    pass at a hundred chat runs, two or three passes per thousand runs. `gc.freeze` sets
    them aside for the campaign (reference counting still frees them); they rejoin the
    collected heap at the end, so nothing leaks past it. A caller that froze the heap
    itself (a pre-fork server) keeps its own freeze: then nothing is touched.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
