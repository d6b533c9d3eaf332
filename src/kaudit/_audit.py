"""`kaudit.audit`: a whole campaign as one call, from names to a ledger and its result.

Everything `kaudit run` does between parsing its options and printing is here: the
suite and its tasks, the run conditions, the agents (model configs read, scripts
checked), the serving-stack preflight, the executor, and the resumable campaign
itself. Nothing here prints; a caller that wants to watch passes `AuditHooks`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kaudit._threads import outside_running_loop
from kaudit.agents import Agent
from kaudit.agents._build import build_agents
from kaudit.errors import KauditError
from kaudit.harness import (
    CampaignPlan,
    Executor,
    RunConditions,
    RunJob,
    StoppingRule,
    run_campaign,
    run_conditions,
)
from kaudit.harness._campaign import CampaignResult
from kaudit.harness._choose import build_executor
from kaudit.harness._proof import prove_tasks
from kaudit.harness._world_preflight import (
    WorldPreflight,
    preflight_world_agents,
    refuse_unenforced_identity,
)
from kaudit.ledger import Anchor, Ledger, RunRecord
from kaudit.spec import FaultRule, Identity, Task
from kaudit.substrate._choice import DEFAULT_SUBSTRATE
from kaudit.suites import Suite, load_suite

if TYPE_CHECKING:
    from kaudit.agents.chat import PreflightReport
    from kaudit.report import Report


class AuditHooks:
    """What a caller may watch while `audit` works; every method does nothing here.

    Subclass and override the ones you need (the CLI's progress bar does).
    """

    def agents(self, agents: Sequence[Agent]) -> None:
        """The agents are built, before the preflight and the first run."""

    def preflight(self, report: PreflightReport | WorldPreflight) -> None:
        """A real model's serving stack, or an agent's own program, passed its preflight."""

    def plan(self, counts: CampaignResult) -> None:
        """The campaign is planned: `planned` runs, `skipped` already in the ledger."""

    def record(self, record: RunRecord) -> None:
        """A run was recorded in the ledger."""

    def stop(self, job: RunJob) -> None:
        """A planned run is not needed: its cell met the stopping rule."""


@dataclass(frozen=True)
class AuditResult:
    """What one `audit` call did to its ledger.

    Attributes:
        ledger: The ledger file.
        campaign: The campaign name inside it.
        recorded: Runs this call recorded.
        interrupted: Whether Ctrl-C ended the call early; every recorded run is kept,
            and the same call resumes.
        counts: What this call did, run by run (None when interrupted).
        head: The ledger's head after the call, to keep elsewhere as an anchor.
        max_attempts: Attempts a run gets while the harness leaves it INVALID.
    """

    ledger: Path
    campaign: str
    recorded: int
    interrupted: bool
    counts: CampaignResult | None
    head: Anchor
    max_attempts: int = 3

    @property
    def open_invalid(self) -> int:
        """Runs still INVALID (harness failures, never counted); 0 when interrupted."""
        return 0 if self.counts is None else self.counts.open_invalid

    def report(self, alpha: float = 0.05) -> Report:
        """The campaign's report, read back from the verified ledger."""
        from kaudit.report._read import read_report

        return read_report(self.ledger, campaign=self.campaign, alpha=alpha)


def audit(
    suite: str | Suite = "builtin",
    agents: Sequence[str | Agent] = ("reference",),
    *,
    ledger: str | Path,
    k: int = 8,
    seed: int = 0,
    concurrency: int = 8,
    tasks: Sequence[str] | None = None,
    variants: bool = False,
    faults: str | Sequence[FaultRule] | None = None,
    identity: str | Path | Identity | None = None,
    substrate: str = DEFAULT_SUBSTRATE,
    stopping: str | StoppingRule | None = None,
    stopping_alpha: float = 0.05,
    campaign: str = "default",
    keep_dumps: bool = False,
    compat: Literal["kaudit", "agentrelbench"] | None = None,
    model_options: Mapping[str, Any] | None = None,
    agent_command: str | None = None,
    agent_timeout: float | None = None,
    tools_command: str | None = None,
    tools_tag: str | None = None,
    upstream: str | Any | None = None,
    max_cost_usd: float | None = None,
    max_run_tokens: int | None = None,
    max_campaign_cost_usd: float | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    max_attempts: int = 3,
    preflight: bool = True,
    hooks: AuditHooks | None = None,
) -> AuditResult:
    """Run every missing run of a campaign (agents × tasks × k) into `ledger`.

    `suite` is `builtin`, a directory, `PREFIX:PATH` (on `substrate`) or a loaded
    `Suite`; `agents` are agent objects or what `kaudit run --agent` takes (a model
    config YAML, `openai:NAME`, `reference`, ...), built with `model_options`
    (base_url, temperature, max_tokens, api_key_env). `faults` is `--faults` text or
    rules; `identity` an identity YAML or an `Identity`; `stopping` a rule such as
    `"damage,upper<0.05"` (then `k` is the maximum). Calling again resumes: finished
    runs are kept, runs the harness left INVALID are retried up to `max_attempts`.
    A real model's stack is probed before the ledger is opened (`preflight`); each
    task's own oracle must PASS first (replayed once per task version, then cached:
    `kaudit.harness._proof`), so a task-file mistake is never scored as agent behaviour;
    and an agent program (`command`/`mcp` with `agent_command`, or a `CommandAgent`)
    runs once on a throwaway world that it must reach, so a setup mistake never becomes
    a record. `tools_command` starts a third-party MCP server per run behind kaudit's
    proxy for `command` agents, `tools_tag` (`NAME=TAG,...`) tags its tools
    (docs/tool-door.md). An external agent's model calls go through kaudit's recording
    proxy to `upstream` (a URL, a model config file with prices, or a
    `kaudit.proxy.Upstream`), each run capped at `max_cost_usd` / `max_run_tokens`; no
    new run starts once the campaign has spent `max_campaign_cost_usd`. Raises
    `KauditError` (or a subclass) naming the bad input; runs inside a notebook's event
    loop too.
    """
    loaded = load_suite(suite, substrate) if isinstance(suite, str) else suite
    loaded = loaded.with_variants() if variants else loaded
    chosen = loaded.select(tasks)
    conditions = run_conditions(loaded, chosen, faults, identity)
    if compat is not None:
        chosen = [t.model_copy(update={"convention": compat}) for t in chosen]
    built = build_agents(
        agents,
        chosen,
        model_options=model_options,
        agent_command=agent_command,
        agent_timeout=agent_timeout,
        tools={"tools_command": tools_command, "tools_tag": tools_tag},
        doors=_model_doors(upstream, max_cost_usd, max_run_tokens),
    )
    plan = CampaignPlan(
        name=campaign,
        k=k,
        seed=seed,
        keep_dumps=keep_dumps,
        until=_stopping_rule(stopping, k, stopping_alpha),
        conditions=conditions,
        max_attempts=max_attempts,
        max_cost_usd=max_campaign_cost_usd,
    )
    watch = hooks or AuditHooks()
    watch.agents(built)
    chosen_executor = build_executor(executor, concurrency, built, ray_address)
    _preflight(built, preflight, watch)
    # A task whose own oracle fails is a task-file mistake: it must never be scored.
    outside_running_loop(lambda: asyncio.run(prove_tasks(loaded, chosen)), name="kaudit-proof")
    _preflight_world(built, loaded, chosen, conditions, seed, preflight, watch)
    return outside_running_loop(
        lambda: _execute(plan, loaded, built, chosen, Path(ledger), chosen_executor, watch),
        name="kaudit-audit",
    )


def _model_doors(
    upstream: str | Any | None, max_cost_usd: float | None, max_run_tokens: int | None
) -> tuple[Any, ...]:
    """The model proxy's door for every external run, when an upstream is named."""
    if upstream is None and max_cost_usd is None and max_run_tokens is None:
        return ()  # the proxy (and aiohttp) only when asked for
    from kaudit.proxy._door import model_door

    door = model_door(upstream, max_cost_usd, max_run_tokens)
    return () if door is None else (door,)


def _stopping_rule(
    stopping: str | StoppingRule | None, k: int, alpha: float
) -> StoppingRule | None:
    if stopping is None or isinstance(stopping, StoppingRule):
        if stopping is not None and stopping.max_k != k:
            raise KauditError(f"the stopping rule's max_k {stopping.max_k} is not k {k}")
        return stopping
    return StoppingRule.parse(stopping, k, alpha)


def _preflight(agents: list[Agent], enabled: bool, hooks: AuditHooks) -> None:
    """Probe each real model's serving stack, before the ledger is opened.

    A stack that cannot do tool calling, a wrong key or model name is a setup mistake,
    and must not become a single record.
    """
    from kaudit.agents.chat import preflight_agents

    for report in preflight_agents(agents, skip=not enabled):
        hooks.preflight(report)


def _preflight_world(
    agents: list[Agent],
    suite: Suite,
    tasks: list[Task],
    conditions: RunConditions,
    seed: int,
    enabled: bool,
    hooks: AuditHooks,
) -> None:
    """One unrecorded run of each agent that reaches the world, before the ledger is opened.

    An identity its world cannot enforce is refused even without the preflight.
    """
    for agent in agents:
        refuse_unenforced_identity(agent, suite, tasks, conditions)
    if not enabled:
        return
    reports = outside_running_loop(
        lambda: asyncio.run(preflight_world_agents(agents, suite, tasks, conditions, seed)),
        name="kaudit-preflight",
    )
    for report in reports:
        hooks.preflight(report)


def _execute(
    plan: CampaignPlan,
    suite: Suite,
    agents: list[Agent],
    tasks: list[Task],
    path: Path,
    executor: Executor,
    hooks: AuditHooks,
) -> AuditResult:
    recorded = 0

    def record(run: RunRecord) -> None:
        nonlocal recorded
        recorded += 1
        hooks.record(run)

    counts: CampaignResult | None = None
    with Ledger(path) as store:
        # Every finished run is already committed when SIGINT lands; the result says so.
        with contextlib.suppress(KeyboardInterrupt):
            counts = asyncio.run(
                run_campaign(
                    plan,
                    suite,
                    agents,
                    store,
                    tasks=tasks,
                    executor=executor,
                    on_result=record,
                    on_plan=hooks.plan,
                    on_stop=hooks.stop,
                )
            )
        head = store.head()
    return AuditResult(
        ledger=path,
        campaign=plan.name,
        recorded=recorded,
        interrupted=counts is None,
        counts=counts,
        head=head,
        max_attempts=plan.max_attempts,
    )
