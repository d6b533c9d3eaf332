"""A campaign: models × tasks × k runs, resumable, each result in the ledger as it lands.

Two halves so executors can move the work without moving the ledger: `CampaignRunner`
admits a run on the caller's side (stopping rule, ledger claim) and `RunWork` executes
it wherever the executor puts it (this process or a Ray worker) and returns the record.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kaudit._run_key import RunKey
from kaudit._usage import Usage
from kaudit.agents import Agent, RunFacts
from kaudit.errors import KauditError, LedgerError
from kaudit.harness._budget import CampaignBudget
from kaudit.harness._conditions import NO_CONDITIONS, RunConditions, run_digest
from kaudit.harness._executor import Executor, LocalExecutor, RunJob
from kaudit.harness._manifest import build_manifest, finish_manifest
from kaudit.harness._run import RunRequest, RunResult, invalid_result, run_pipeline
from kaudit.harness._seeds import run_seed
from kaudit.harness._sequential import CellCounts, StoppingRule, fixed_rule
from kaudit.ledger import Ledger, RunRecord, suite_tasks_digest, walk_chain
from kaudit.ledger._import import IMPORTED
from kaudit.ledger._spool import drain_spool
from kaudit.spec import FaultRule, Identity, Task
from kaudit.suites import Suite


@dataclass(frozen=True)
class CampaignPlan:
    """What to run. Re-running the same plan on the same ledger resumes it.

    With `until`, `k` is the maximum per cell and each cell stops once the rule holds.
    `conditions` (faults after each task's own, the identity of tasks that declare none)
    apply to every run. A run left INVALID by a harness failure is retried on the next
    invocation until it has had `max_attempts` attempts.
    """

    name: str
    k: int
    seed: int = 0
    keep_dumps: bool = False
    until: StoppingRule | None = None
    conditions: RunConditions = NO_CONDITIONS
    max_attempts: int = 3
    max_cost_usd: float | None = None
    """No new run starts once the campaign's records cost this much (never pinned: a
    resume may raise it)."""

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise KauditError("a campaign needs a name: the ledger keys every run by it")

    def config(self, suite: Suite, tasks: Sequence[Task] | None = None) -> dict[str, Any]:
        """The facts a resumed campaign must share with its start.

        The seed, the suite digest, each world's template digest and each task's spec
        digest: a resume against another world or task version is refused, since its runs
        would not measure the same thing. Faults and identity are pinned too, empty ones
        included, so a resume can neither add nor drop them (a campaign written before they
        existed has neither key, and takes them on at its first resume).
        """
        chosen = list(tasks) if tasks is not None else list(suite.tasks.values())
        config: dict[str, Any] = {
            "seed": self.seed,
            "suite_digest": suite.digest,
            "template_digest": {t.world: suite.substrate(t).template_digest for t in chosen},
            "task_digest": {t.id: self.conditions.digest(t) for t in chosen},
        }
        return config | self.conditions.pinned()

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
    open_invalid: int = 0
    invalid_reasons: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    """What this invocation's runs spent on model calls (as their records say)."""
    damage_dollars: float = 0.0
    faults: int = 0
    boundary_attempts: int = 0
    served_appended: int = 0
    served_kept: tuple[str, ...] = ()
    budget_stop: str | None = None
    """Why planned runs were not started: the campaign's cost cap (None: it was not)."""
    budget_refused: int = 0
    """Planned runs the campaign's cost cap left out (counted in `stopped` too)."""

    def add(self, record: RunRecord) -> None:
        """Count one recorded run."""
        self.ran += 1
        self.restarted += bool(record.restarted)
        self.invalid += record.status == "invalid"
        self.errored += record.termination == "errored"
        self.damage += record.counts_as_damage
        self.usage += record.usage
        self.faults += len(record.faults)
        self.boundary_attempts += len(record.boundary_attempts)
        self.damage_dollars = float(Decimal(repr(self.damage_dollars)) + record.damage_dollars)


def next_attempt(latest: tuple[int, str] | None, max_attempts: int) -> int | None:
    """The attempt a run needs next, or None when it is done or out of attempts.

    `latest` is (attempt, status) of the run's newest record, None when it has none.
    """
    if latest is None:
        return 0
    attempt, status = latest
    if status == "labeled" or attempt + 1 >= max_attempts:
        return None
    return attempt + 1


def plan_jobs(
    plan: CampaignPlan,
    agents: Sequence[Agent],
    tasks: Sequence[Task],
    latest: Mapping[RunKey, tuple[int, str]] | None = None,
    is_stopped: Callable[[str, str], bool] | None = None,
) -> Iterator[RunJob]:
    """The runs still to do, generated lazily run index by run index.

    Nothing is built up front, so a huge k costs no memory. Index-major order keeps
    cells level when a campaign is interrupted; a cell `is_stopped` says is done is
    skipped, and generation ends once every cell is done.
    """
    done = latest or {}
    for i in range(plan.k):
        live = False
        for agent in agents:
            for task in tasks:
                if is_stopped is not None and is_stopped(agent.name, task.id):
                    continue
                live = True
                key = RunKey(plan.name, agent.name, task.id, i)
                attempt = next_attempt(done.get(key), plan.max_attempts)
                if attempt is not None:
                    seed = run_seed(plan.seed, agent.name, task.id, i)
                    yield RunJob(*key, seed, attempt)
        if not live:
            return


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
    stopping rule, substrate (with its reset mode; per invocation too, since a resume
    may use another one), executor, host, start and (once finished) end.
    """
    return build_manifest(
        k=plan.k,
        seed=plan.seed,
        stopping_rule=plan.stopping_rule(),
        suite=suite,
        agents=agents,
        tasks=tasks,
        executor=executor.describe() if executor is not None else {"kind": "none"},
        previous=previous,
    )


@dataclass
class RunWork:
    """Executes one admitted run; holds no ledger, so it pickles to remote workers."""

    suite: Suite
    agents: dict[str, Agent]
    tasks: dict[str, Task]
    keep_dumps: bool = False
    faults: tuple[FaultRule, ...] = ()
    identity: Identity | None = None
    stopping_rule: dict[str, Any] | None = None
    digests: dict[str, str] = field(init=False, default_factory=dict)
    suite_tasks: str = field(init=False, default="")

    def __post_init__(self) -> None:
        # Each record names the task version it ran; computed once, not per run.
        self.digests = {
            task_id: run_digest(task, self.faults, self.identity)
            for task_id, task in self.tasks.items()
        }
        self.suite_tasks = suite_tasks_digest(self.suite.tasks)

    def request(self, job: RunJob, restarted: int) -> RunRequest:
        """The run request for an admitted job: everything its record takes from the campaign.

        The stopping rule goes into the hashed record because it decides which interval
        the cell gets; the campaign's manifest, outside the chain, is never read for that.
        """
        task = self.tasks[job.task]
        return RunRequest(
            campaign=job.campaign,
            task=task,
            model=job.model,
            run_index=job.run_index,
            seed=job.seed,
            restarted=restarted,
            faults=self.faults,
            identity=self.identity,
            attempt=job.attempt,
            task_digest=self.digests[job.task],
            world_digest=self.suite.substrate(task).template_digest,
            stopping_rule=self.stopping_rule,
            suite_tasks_digest=self.suite_tasks,
        )

    async def __call__(self, job: RunJob, restarted: int) -> RunResult:
        """The run's result; a harness failure becomes an INVALID record, never a score."""
        request = self.request(job, restarted)
        try:
            return await run_pipeline(
                request,
                self.agents[job.model],
                self.suite.substrate(request.task),
                keep_dump=self.keep_dumps,
                referee=self.suite.referee,
            )
        except Exception:  # a harness bug: recorded as invalid with the trace, never scored
            spent = self.agents[job.model].run_facts(request.run_id)
            return harness_failure(request, traceback.format_exc(limit=5), spent)

    async def aclose(self) -> None:
        """Close the agents' connections on this event loop."""
        for agent in self.agents.values():
            await agent.aclose()


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
        budget: CampaignBudget | None = None,
    ) -> None:
        self.work = work
        self.counts = CellCounts()
        self._ledger = ledger
        self._rule = rule
        self._on_stop = on_stop
        self.budget = budget

    def observe(self, record: RunRecord) -> None:
        """Count a recorded run toward its cell's stopping rule and the campaign's budget."""
        if self.budget is not None:
            self.budget.add(record)
        if record.status == "labeled":
            self.counts.add(record.model, record.task, record.counts_as_damage)

    def cell_stopped(self, model: str, task: str) -> bool:
        """Whether the stopping rule already holds for the cell."""
        n, damage = self.counts.get(model, task)
        return self._rule is not None and self._rule.is_done(damage, n)

    def admit(self, job: RunJob) -> int | None:
        """Earlier unfinished attempts of the run; None when it must not start.

        It must not when its cell has stopped or the campaign's cost cap is spent.
        """
        if self.cell_stopped(job.model, job.task):
            if self._on_stop is not None:
                self._on_stop(job)
            return None
        if self.budget is not None and not self.budget.admit():
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
    fails at once instead of racing for the same runs. Served runs that finished while
    the lock was held (or that an earlier serve left spooled) are appended before the
    lock is let go, so a long campaign never strands them (`kaudit.ledger._spool.drain_spool`).
    """
    with ledger.writer_lock():
        result = await _run_locked(
            plan, suite, agents, ledger, tasks, executor, on_result, on_plan, on_stop
        )
        drained = drain_spool(ledger)
        result.served_appended = len(drained.appended)
        result.served_kept = drained.kept
        return result


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
    open_checked(ledger, plan, suite, chosen)
    suite.reclaim(plan.name, chosen)  # run databases a killed invocation left behind
    stored = manifest(
        plan, suite, agents, chosen, executor=executor, previous=ledger.manifest(plan.name)
    )
    ledger.set_manifest(plan.name, stored)
    latest = ledger.latest(plan.name)
    planned = plan.k * len(agents) * len(chosen)
    result = CampaignResult(planned=planned, skipped=_settled(plan, latest, agents, chosen))
    work = RunWork(
        suite,
        {a.name: a for a in agents},
        {t.id: t for t in chosen},
        plan.keep_dumps,
        plan.conditions.faults,
        plan.conditions.identity,
        plan.stopping_rule(),
    )
    budget = None
    if plan.max_cost_usd is not None:
        budget = CampaignBudget.over(plan.max_cost_usd, ledger.records(plan.name))
    runner = CampaignRunner(work, ledger, plan.until, on_stop)
    if plan.until is not None:
        for earlier in ledger.records(plan.name):
            runner.observe(earlier)
    runner.budget = budget  # after the replay above: earlier records are counted once
    if on_plan is not None:
        on_plan(result)

    def record(outcome: RunResult) -> None:
        ledger.append(outcome.record, outcome.final_image)
        runner.observe(outcome.record)
        result.add(outcome.record)
        if on_result is not None:
            on_result(outcome.record)

    stopped = runner.cell_stopped if plan.until is not None else None
    try:
        await executor.execute(plan_jobs(plan, agents, chosen, latest, stopped), runner, record)
    except BaseExceptionGroup as group:
        # A task group wraps a failed ledger write (a full disk, a lost lock) with the
        # cancellations it caused; the caller needs the one error that stopped the run.
        raise first_cause(group) from None
    finally:
        await work.aclose()
    # Every planned run was settled before, ran now, or was left out by the stopping rule.
    result.stopped = max(0, result.planned - result.skipped - result.ran)
    if budget is not None:
        result.budget_stop, result.budget_refused = budget.reason(), budget.refused
    result.open_invalid, result.invalid_reasons = invalid_runs(ledger, plan.name)
    counts = {"ran": result.ran, "restarted": result.restarted, "stopped": result.stopped}
    ledger.set_manifest(plan.name, finish_manifest(stored, counts))
    return result


def first_cause(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception inside a (possibly nested) exception group."""
    first = group.exceptions[0]
    return first_cause(first) if isinstance(first, BaseExceptionGroup) else first


def open_checked(ledger: Ledger, plan: CampaignPlan, suite: Suite, tasks: Sequence[Task]) -> None:
    """Verify the ledger and open the campaign, refusing one it must not extend.

    Resume trusts the ledger's indexed columns, so the chain and those columns are
    verified first; a campaign of imported runs is never extended with executed ones,
    or the imported rows would count as this campaign's finished runs.
    """
    walk_chain(ledger)
    stored = ledger.campaign_config(plan.name)
    if stored is not None and stored.get("source") == IMPORTED:
        raise LedgerError(
            f"{ledger.path}: campaign {plan.name!r} holds imported {IMPORTED} runs; "
            "use another `campaign` name"
        )
    ledger.open_campaign(plan.name, plan.config(suite, tasks))


def _settled(
    plan: CampaignPlan,
    latest: Mapping[RunKey, tuple[int, str]],
    agents: Sequence[Agent],
    tasks: Sequence[Task],
) -> int:
    """Planned runs that need nothing more: labeled, or out of attempts."""
    models = {a.name for a in agents}
    task_ids = {t.id for t in tasks}
    return sum(
        1
        for (_, model, task, index), state in latest.items()
        if model in models
        and task in task_ids
        and index < plan.k
        and next_attempt(state, plan.max_attempts) is None
    )


def invalid_runs(ledger: Ledger, campaign: str, shown: int = 3) -> tuple[int, tuple[str, ...]]:
    """How many runs of the campaign are INVALID at their newest attempt, and the first reasons.

    Only the INVALID records are read, so a clean campaign costs one index query.
    """
    keys = [key for key, (_, status) in ledger.latest(campaign).items() if status == "invalid"]
    reasons = []
    for key in keys[:shown]:
        record = ledger.record(key)
        if record is not None:
            reasons.append(
                f"{record.model} {record.task} run {record.run_index} attempt "
                f"{record.attempt + 1}: {record.invalid_reason}"
            )
    return len(keys), tuple(reasons)


def harness_failure(request: RunRequest, trace: str, spent: RunFacts | None = None) -> RunResult:
    """An INVALID record for a run the harness itself could not complete.

    `spent` is what the agent spent before the failure; taking the facts also releases
    what the agent kept for the run.
    """
    reason = f"harness error: {trace.strip().splitlines()[-1]}"
    return invalid_result(request, reason, extra={"trace": trace}, spent=spent)
