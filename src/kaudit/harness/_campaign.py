"""A campaign: models × tasks × k runs, resumable, each result in the ledger as it lands.

Two halves so executors can move the work without moving the ledger: `CampaignRunner`
admits a run on the caller's side (stopping rule, ledger claim) and `RunWork` executes
it wherever the executor puts it (this process or a Ray worker) and returns the record.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kaudit.agents import Agent
from kaudit.harness._executor import Executor, LocalExecutor, RunJob
from kaudit.harness._manifest import build_manifest, finish_manifest
from kaudit.harness._run import RunResult, execute_run, invalid_result, run_id
from kaudit.harness._seeds import run_seed
from kaudit.harness._sequential import CellCounts, StoppingRule, fixed_rule
from kaudit.ledger import Ledger, RunRecord
from kaudit.spec import Task
from kaudit.suites import Suite


@dataclass(frozen=True)
class CampaignPlan:
    """What to run. Re-running the same plan on the same ledger resumes it.

    With `until`, `k` is the maximum per cell and each cell stops once the rule holds.
    """

    name: str
    k: int
    seed: int = 0
    keep_dumps: bool = False
    until: StoppingRule | None = None

    def config(self, suite: Suite) -> dict[str, Any]:
        """The facts a resumed campaign must share with its start."""
        return {"seed": self.seed, "suite_digest": suite.digest}

    def stopping_rule(self) -> dict[str, Any]:
        """The rule for the manifest: fixed k, or the sequential rule."""
        return self.until.describe() if self.until else fixed_rule(self.k)


@dataclass
class CampaignResult:
    """Counts of what this invocation did; tokens and dollars cover its runs only."""

    planned: int = 0
    skipped: int = 0
    ran: int = 0
    restarted: int = 0
    invalid: int = 0
    damage: int = 0
    errored: int = 0
    stopped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    damage_dollars: float = 0.0

    def add(self, record: RunRecord) -> None:
        """Count one recorded run."""
        self.ran += 1
        self.restarted += bool(record.restarted)
        self.invalid += record.status == "invalid"
        self.errored += record.termination == "errored"
        self.damage += record.counts_as_damage
        self.input_tokens += record.input_tokens
        self.output_tokens += record.output_tokens
        self.cost_usd += record.cost_usd
        self.damage_dollars = float(
            Decimal(repr(self.damage_dollars)) + Decimal(repr(record.dollars or 0))
        )


def plan_jobs(plan: CampaignPlan, agents: Sequence[Agent], tasks: Sequence[Task]) -> list[RunJob]:
    """Every (model, task, run index) of the plan, in a stable order."""
    return [
        RunJob(plan.name, agent.name, task.id, i, run_seed(plan.seed, agent.name, task.id, i))
        for agent in agents
        for task in tasks
        for i in range(plan.k)
    ]


def manifest(
    plan: CampaignPlan,
    suite: Suite,
    agents: Sequence[Agent],
    tasks: Sequence[Task],
    *,
    executor: Executor | None = None,
    previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The campaign's provenance, extending any `previous` manifest of the same campaign.

    Versions, git commit, suite and template digests, redacted model configs, sampling,
    stopping rule, substrate, executor, host, start and (once finished) end.
    """
    describe = getattr(executor, "describe", None)
    return build_manifest(
        k=plan.k,
        seed=plan.seed,
        stopping_rule=plan.stopping_rule(),
        suite=suite,
        agents=agents,
        tasks=tasks,
        executor=describe() if callable(describe) else {"kind": type(executor).__name__},
        previous=previous,
    )


@dataclass
class RunWork:
    """Executes one admitted run; holds no ledger, so it pickles to remote workers."""

    suite: Suite
    agents: dict[str, Agent]
    tasks: dict[str, Task]
    keep_dumps: bool = False

    async def __call__(self, job: RunJob, restarted: int) -> RunResult:
        """The run's result; a harness failure becomes an INVALID record, never a score."""
        task = self.tasks[job.task]
        agent = self.agents[job.model]
        try:
            result = await execute_run(
                campaign=job.campaign,
                task=task,
                agent=agent,
                substrate=self.suite.substrate(task),
                run_index=job.run_index,
                seed=job.seed,
                restarted=restarted,
                keep_dump=self.keep_dumps,
            )
        except Exception:  # a harness bug: recorded as invalid with the trace, never scored
            result = harness_failure(job, restarted, traceback.format_exc(limit=5))
        return with_agent_facts(result, agent, job)

    async def aclose(self) -> None:
        """Close the agents' connections on this event loop."""
        for agent in self.agents.values():
            close = getattr(agent, "aclose", None)
            if callable(close):
                await close()


def with_agent_facts(result: RunResult, agent: Agent, job: RunJob) -> RunResult:
    """The record completed with what the agent kept outside its turns.

    A chat agent's last API call can fail after retries: no turn carries those retries,
    so the agent's own per-run totals (`run_facts`) replace the turn sums, and its
    sampling parameters are recorded with the run.
    """
    facts = getattr(agent, "run_facts", None)
    if not callable(facts):
        return result
    found: dict[str, Any] = facts(run_id(*job.key))
    totals = found.get("totals", {})
    record = result.record
    update: dict[str, Any] = {"extra": record.extra | {"sampling": found.get("sampling")}}
    if totals.get("api_calls"):
        update |= {
            "input_tokens": totals["input_tokens"],
            "output_tokens": totals["output_tokens"],
            "cost_usd": totals["cost_usd"],
            "retries": totals["retries"],
        }
        update["extra"] = update["extra"] | {"api_calls": totals["api_calls"]}
    return RunResult(record.model_copy(update=update), result.final_image, result.verdict)


class CampaignRunner:
    """The job runner `run_campaign` hands to executors.

    `admit` runs on the caller's side, where the ledger is: it applies the stopping
    rule and claims the run (counting earlier attempts that never finished). `work`
    can run anywhere; the Ray executor calls `admit` locally and ships `work`.
    """

    def __init__(
        self,
        work: RunWork,
        ledger: Ledger,
        rule: StoppingRule | None,
        on_stop: Callable[[RunJob], None] | None = None,
    ) -> None:
        self.work = work
        self.counts = CellCounts()
        self._ledger = ledger
        self._rule = rule
        self._on_stop = on_stop

    def observe(self, record: RunRecord) -> None:
        """Count a recorded run toward its cell's stopping rule."""
        if record.status == "labeled":
            self.counts.add(record.model, record.task, record.counts_as_damage)

    def admit(self, job: RunJob) -> int | None:
        """Earlier unfinished attempts of the run, or None when its cell has stopped."""
        n, damage = self.counts.get(job.model, job.task)
        if self._rule is not None and self._rule.is_done(damage, n):
            if self._on_stop is not None:
                self._on_stop(job)
            return None
        return self._ledger.claim(job.key)

    async def __call__(self, job: RunJob) -> RunResult | None:
        """Admit and execute in this process."""
        restarted = self.admit(job)
        if restarted is None:
            return None
        return await self.work(job, restarted)


async def run_campaign(
    plan: CampaignPlan,
    suite: Suite,
    agents: Sequence[Agent],
    ledger: Ledger,
    *,
    tasks: Sequence[Task] | None = None,
    executor: Executor | None = None,
    on_result: Callable[[RunRecord], None] | None = None,
    on_plan: Callable[[CampaignResult], None] | None = None,
    on_stop: Callable[[RunJob], None] | None = None,
) -> CampaignResult:
    """Run every missing run of the plan; finished runs in the ledger are kept as they are.

    `on_plan` sees the counts before the first run, `on_result` each record as it lands,
    `on_stop` each run the stopping rule left out. Agents' connections are closed at the end.
    The ledger's writer lock is held throughout: a second process on the same ledger
    fails at once instead of racing for the same runs.
    """
    with ledger.writer_lock():
        return await _run_locked(
            plan, suite, agents, ledger, tasks, executor, on_result, on_plan, on_stop
        )


async def _run_locked(
    plan: CampaignPlan,
    suite: Suite,
    agents: Sequence[Agent],
    ledger: Ledger,
    tasks: Sequence[Task] | None,
    executor: Executor | None,
    on_result: Callable[[RunRecord], None] | None,
    on_plan: Callable[[CampaignResult], None] | None,
    on_stop: Callable[[RunJob], None] | None,
) -> CampaignResult:
    chosen = list(tasks) if tasks is not None else list(suite.tasks.values())
    executor = executor or LocalExecutor()
    ledger.open_campaign(plan.name, plan.config(suite))
    suite.reclaim(plan.name, chosen)  # run databases a killed invocation left behind
    stored = manifest(
        plan, suite, agents, chosen, executor=executor, previous=ledger.manifest(plan.name)
    )
    ledger.set_manifest(plan.name, stored)
    jobs = plan_jobs(plan, agents, chosen)
    done = ledger.finished(plan.name)
    todo = [job for job in jobs if job.key not in done]
    result = CampaignResult(planned=len(jobs), skipped=len(jobs) - len(todo))
    work = RunWork(suite, {a.name: a for a in agents}, {t.id: t for t in chosen}, plan.keep_dumps)

    def stopped(job: RunJob) -> None:
        result.stopped += 1
        if on_stop is not None:
            on_stop(job)

    runner = CampaignRunner(work, ledger, plan.until, stopped)
    if plan.until is not None:
        for earlier in ledger.records(plan.name):
            runner.observe(earlier)
    if on_plan is not None:
        on_plan(result)

    def record(outcome: RunResult) -> None:
        ledger.append(outcome.record, outcome.final_image)
        runner.observe(outcome.record)
        result.add(outcome.record)
        if on_result is not None:
            on_result(outcome.record)

    try:
        await executor.execute(todo, runner, record)
    finally:
        await work.aclose()
    counts = {"ran": result.ran, "restarted": result.restarted, "stopped": result.stopped}
    ledger.set_manifest(plan.name, finish_manifest(stored, counts))
    return result


def harness_failure(job: RunJob, restarted: int, trace: str) -> RunResult:
    """An INVALID record for a run the harness itself could not complete."""
    key = {
        "campaign": job.campaign,
        "model": job.model,
        "task": job.task,
        "run_index": job.run_index,
    }
    reason = f"harness error: {trace.strip().splitlines()[-1]}"
    return invalid_result(key, job.seed, restarted, reason, extra={"trace": trace})
