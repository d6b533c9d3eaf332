"""The Ray executor: the same campaign on a Ray cluster, with the same ledger semantics.

The ledger stays with the caller. Admission (stopping rule, claim) and recording happen
here exactly as with `LocalExecutor`, whose scheduler is reused so concurrency bounds and
per-model caps hold cluster-wide; only `RunWork` travels, once per worker actor, and each
run comes back as its finished record. Ray retries nothing: a run re-executed behind the
ledger's back would be a silent re-run, so a lost worker fails the campaign, and the
same command resumes it (the interrupted runs are marked restarted).

Ray is an optional extra, imported only when this executor runs.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import resource
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kaudit._require import require_at_least
from kaudit.errors import KauditError
from kaudit.harness._campaign import CampaignRunner, RunWork
from kaudit.harness._executor import JobRunner, LocalExecutor, OnResult, RunJob
from kaudit.harness._run import RunResult

JobFields = tuple[str, str, str, int, int, int]
"""A `RunJob` as plain values: Ray sends those without pickling a class (~0.1 ms a run)."""


@dataclass(frozen=True)
class RayStats:
    """What the last `execute` cost on the workers, for capacity planning (bench/, docs).

    `startup_s` is the wait for every actor to come up (a process each, the campaign's
    work unpickled once), a fixed cost apart from the per-run cost; `worker_cpu_s` is
    the CPU (user + system) the actors spent after that, summed over actors.
    """

    startup_s: float
    worker_cpu_s: float
    worker_peak_rss_mb: float


class _Worker:
    """A Ray actor holding one copy of the campaign's work; runs execute on its event loop."""

    def __init__(self, work: RunWork) -> None:
        self.work = work

    async def run(self, job: JobFields, restarted: int) -> RunResult:
        result = await self.work(RunJob(*job), restarted)
        # the campaign records the record and the image; the verdict is in the record
        return RunResult(result.record, result.final_image, None)

    def usage(self) -> tuple[float, float]:
        """(CPU seconds of this process so far, its peak resident set in MB)."""
        return time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RayExecutor:
    """Runs a campaign's runs on Ray worker actors; a local cluster when no address is given.

    `workers` actors each take up to `concurrency / workers` runs at once (chat runs
    mostly wait on the network). A cluster started here is shut down at the end; one
    already initialized (or reached through `address`) is left running.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int = 2,
        concurrency: int = 8,
        model_caps: Mapping[str, int] | None = None,
        init_options: Mapping[str, Any] | None = None,
    ) -> None:
        require_at_least("workers", workers, 1)
        self.address = address
        self.workers = workers
        self.scheduler = LocalExecutor(concurrency, model_caps)
        self.init_options = dict(init_options or {})
        self.stats: RayStats | None = None
        """Filled by each `execute` that started actors."""

    def describe(self) -> dict[str, Any]:
        """The executor for the campaign manifest."""
        return {
            "kind": "ray",
            "address": self.address or "local",
            "workers": self.workers,
            "concurrency": self.scheduler.concurrency,
            "model_caps": self.scheduler.model_caps,
        }

    async def execute(self, jobs: Iterable[RunJob], run: JobRunner, on_result: OnResult) -> None:
        """Admit locally, execute on the actors, record locally as results arrive."""
        if not isinstance(run, CampaignRunner):
            raise KauditError("the Ray executor runs campaigns (run_campaign's runner) only")
        source = iter(jobs)
        first = next(source, None)
        if first is None:
            return  # nothing to run: no cluster is started
        ray = _import_ray()
        started_here = self._connect(ray)
        actors: list[Any] = []
        try:
            actor_class = ray.remote(_Worker)
            per_actor = max(1, math.ceil(self.scheduler.concurrency / self.workers))
            work_ref = ray.put(run.work)
            started = time.perf_counter()
            actors = [
                actor_class.options(max_concurrency=per_actor, max_restarts=0).remote(work_ref)
                for _ in range(self.workers)
            ]
            # Wait for every actor before the first run: a run then never waits on a process
            # start, and the start is measured apart from the runs.
            before = await asyncio.gather(*(actor.usage.remote() for actor in actors))
            startup = time.perf_counter() - started
            turn = itertools.cycle(actors)

            async def remote(job: RunJob) -> RunResult | None:
                restarted = run.admit(job)
                if restarted is None:
                    return None
                fields = (job.campaign, job.model, job.task, job.run_index, job.seed, job.attempt)
                result: RunResult = await next(turn).run.remote(fields, restarted)
                return result

            await self.scheduler.execute(itertools.chain([first], source), remote, on_result)
            after = await asyncio.gather(*(actor.usage.remote() for actor in actors))
            self.stats = RayStats(
                startup_s=startup,
                worker_cpu_s=sum(a[0] - b[0] for a, b in zip(after, before, strict=True)),
                worker_peak_rss_mb=max(a[1] for a in after),
            )
        finally:
            for actor in actors:
                ray.kill(actor)
            if started_here:
                ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        options.update(self.init_options)
        ray.init(address=self.address, **options)
        return True


def _import_ray() -> Any:
    try:
        import ray
    except ModuleNotFoundError:
        raise KauditError("the Ray executor needs Ray: pip install 'kaudit[ray]'") from None
    return ray
