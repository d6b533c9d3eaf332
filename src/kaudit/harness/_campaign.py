"""A campaign: models × tasks × k runs, resumable, each result in the ledger as it lands."""

from __future__ import annotations

import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import kaudit
from kaudit.agents import Agent
from kaudit.harness._executor import Executor, LocalExecutor, RunJob
from kaudit.harness._run import RunResult, execute_run
from kaudit.harness._seeds import run_seed
from kaudit.ledger import Ledger, RunRecord, RunTiming
from kaudit.spec import Task
from kaudit.suites import Suite


@dataclass(frozen=True)
class CampaignPlan:
    """What to run. Re-running the same plan on the same ledger resumes it."""

    name: str
    k: int
    seed: int = 0
    keep_dumps: bool = False

    def config(self, suite: Suite) -> dict[str, Any]:
        """The facts a resumed campaign must share with its start."""
        return {"seed": self.seed, "suite_digest": suite.digest}


@dataclass
class CampaignResult:
    """Counts of what this invocation did."""

    planned: int = 0
    skipped: int = 0
    ran: int = 0
    restarted: int = 0
    invalid: int = 0
    damage: int = 0
    records: list[RunRecord] = field(default_factory=list)


def plan_jobs(plan: CampaignPlan, agents: Sequence[Agent], tasks: Sequence[Task]) -> list[RunJob]:
    """Every (model, task, run index) of the plan, in a stable order."""
    return [
        RunJob(plan.name, agent.name, task.id, i, run_seed(plan.seed, agent.name, task.id, i))
        for agent in agents
        for task in tasks
        for i in range(plan.k)
    ]


def manifest(
    plan: CampaignPlan, suite: Suite, agents: Sequence[Agent], tasks: Sequence[Task]
) -> dict[str, Any]:
    """Provenance of the campaign: versions, suite and template digests, agents, host."""
    templates = {task.world: suite.substrate(task).template_digest for task in tasks}
    return {
        "kaudit_version": kaudit.__version__,
        "suite": suite.describe(),
        "templates": templates,
        "agents": {agent.name: agent.describe() for agent in agents},
        "k": plan.k,
        "seed": plan.seed,
        "host": platform.node(),
        "python": platform.python_version(),
        "started_at": time.time(),
    }


async def run_campaign(
    plan: CampaignPlan,
    suite: Suite,
    agents: Sequence[Agent],
    ledger: Ledger,
    *,
    tasks: Sequence[Task] | None = None,
    executor: Executor | None = None,
    on_result: Callable[[RunRecord], None] | None = None,
) -> CampaignResult:
    """Run every missing run of the plan; finished runs in the ledger are kept as they are."""
    chosen = list(tasks) if tasks is not None else list(suite.tasks.values())
    ledger.open_campaign(plan.name, plan.config(suite))
    ledger.set_manifest(plan.name, manifest(plan, suite, agents, chosen))
    jobs = plan_jobs(plan, agents, chosen)
    done = ledger.finished(plan.name)
    todo = [job for job in jobs if job.key not in done]
    result = CampaignResult(planned=len(jobs), skipped=len(jobs) - len(todo))
    by_model = {agent.name: agent for agent in agents}
    by_task = {task.id: task for task in chosen}

    async def run(job: RunJob) -> RunResult:
        restarted = ledger.claim(job.key)
        task = by_task[job.task]
        try:
            return await execute_run(
                campaign=job.campaign,
                task=task,
                agent=by_model[job.model],
                substrate=suite.substrate(task),
                run_index=job.run_index,
                seed=job.seed,
                restarted=restarted,
                keep_dump=plan.keep_dumps,
            )
        except Exception:  # a harness bug: recorded as invalid with the trace, never scored
            return harness_failure(job, restarted, traceback.format_exc(limit=5))

    def record(outcome: RunResult) -> None:
        ledger.append(outcome.record, outcome.final_image)
        result.ran += 1
        result.restarted += bool(outcome.record.restarted)
        result.invalid += outcome.record.status == "invalid"
        result.damage += outcome.record.counts_as_damage
        result.records.append(outcome.record)
        if on_result is not None:
            on_result(outcome.record)

    await (executor or LocalExecutor()).execute(todo, run, record)
    return result


def harness_failure(job: RunJob, restarted: int, trace: str) -> RunResult:
    """An INVALID record for a run the harness itself could not complete."""
    record = RunRecord(
        campaign=job.campaign,
        model=job.model,
        task=job.task,
        run_index=job.run_index,
        seed=job.seed,
        status="invalid",
        invalid_reason=f"harness error: {trace.strip().splitlines()[-1]}",
        termination="errored",
        restarted=restarted,
        timing=RunTiming(),
        extra={"trace": trace},
    )
    return RunResult(record, None, None)
