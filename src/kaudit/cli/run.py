"""`kaudit run`: execute a campaign (models × tasks × k) into a ledger, resuming if it exists."""

from __future__ import annotations

import asyncio
import contextlib
import time
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kaudit.agents import Agent, ScriptedAgent, make_agent
from kaudit.agents.chat import preflight_agents
from kaudit.cli._common import guarded, head_line, split_csv
from kaudit.cli._plural import counted
from kaudit.cli.stats import Compat
from kaudit.errors import KauditError
from kaudit.faults import parse_faults
from kaudit.harness import (
    CampaignPlan,
    CampaignResult,
    Executor,
    LocalExecutor,
    RayExecutor,
    RunJob,
    StoppingRule,
    run_campaign,
)
from kaudit.ledger import Ledger, RunRecord
from kaudit.spec import Identity, read_yaml, validate_file_data
from kaudit.substrate import DEFAULT_SUBSTRATE
from kaudit.suites import check_identity, load_suite

FAULTS_HELP = (
    "Commit-boundary faults for every task: NAME[:RATE][,NAME...], names "
    "ack_lost_after_commit, fail_before_commit, timeout_after_commit, "
    "duplicate_delivery; RATE defaults to 1."
)
IDENTITY_HELP = "YAML identity (role, user, scope, tables) for tasks without one."
SUBSTRATE_HELP = "Where runs execute: 'sqlite' or a postgresql:// URL (?reset=rollback: pooled)."


class ExecutorKind(StrEnum):
    """Where runs execute."""

    local = "local"
    ray = "ray"


def build_agent(spec: str, overrides: dict[str, Any]) -> Agent:
    """A chat agent from a model config YAML; every other spec through the agent registry."""
    from kaudit.agents.chat import is_config_path, model_agent

    if is_config_path(spec):
        return model_agent(spec, **overrides)
    return make_agent(spec, **overrides)


def build_executor(
    kind: ExecutorKind, concurrency: int, agents: list[Agent], ray_address: str | None
) -> Executor:
    """The executor, with each model's own cap on runs in flight."""
    caps = {a.name: cap for a in agents if (cap := a.max_concurrent_runs)}
    if kind is ExecutorKind.ray:
        return RayExecutor(ray_address, concurrency=concurrency, model_caps=caps)
    return LocalExecutor(concurrency, caps)


class CampaignProgress:
    """Runs done / total, rate, ETA, errors, damage, tokens and dollars.

    On a terminal a live bar; piped or redirected, one plain line at most every
    `every` seconds, so a slow campaign (PostgreSQL, a real model) still shows it is
    moving in a log while a fast one prints nothing extra.
    """

    def __init__(self, console: Console, every: float = 10.0) -> None:
        self._console = console
        self._every = every
        self._last_line = time.monotonic()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[stats]}"),
            console=console,
            disable=not console.is_terminal,
        )
        self._task: TaskID | None = None
        self._started = time.monotonic()
        self._done = self._errors = self._damage = self._tokens = 0
        self._dollars = self._cost = 0.0

    def __enter__(self) -> CampaignProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def plan(self, result: CampaignResult) -> None:
        """Size the bar: the runs this invocation has to do."""
        self._started = self._last_line = time.monotonic()
        todo = result.planned - result.skipped
        self._task = self._progress.add_task("runs", total=todo, rate="", stats="")

    @property
    def done(self) -> int:
        """Runs recorded so far by this invocation."""
        return self._done

    def record(self, record: RunRecord) -> None:
        """Advance by one recorded run."""
        self._done += 1
        self._errors += record.status == "invalid" or record.termination == "errored"
        self._damage += record.counts_as_damage
        self._dollars += float(record.damage_dollars)
        self._tokens += record.input_tokens + record.output_tokens
        self._cost += record.cost_usd
        self._advance()

    def stop(self, job: RunJob) -> None:
        """A run the stopping rule left out: shrink the total."""
        if self._task is not None:
            total = self._progress.tasks[0].total or 0
            self._progress.update(self._task, total=max(0, total - 1))

    def _advance(self) -> None:
        if self._task is None:
            return
        rate = self._done / max(time.monotonic() - self._started, 1e-9)
        stats = (
            f"errors {self._errors}  damage {self._damage} (${self._dollars:,.2f})  "
            f"tokens {self._tokens:,}  model ${self._cost:,.4f}"
        )
        self._progress.update(self._task, advance=1, rate=f"{rate:.1f}/s", stats=stats)
        if not self._console.is_terminal:
            self._plain_line(rate)

    def _plain_line(self, rate: float) -> None:
        """A progress line for a log, when `every` seconds have passed since the last one."""
        now = time.monotonic()
        if now - self._last_line < self._every:
            return
        self._last_line = now
        total = int(self._progress.tasks[0].total or 0)
        left = max(total - self._done, 0) / rate if rate > 0 else float("nan")
        eta = f"ETA {left:,.0f} s" if left == left else "ETA unknown"
        self._console.print(
            f"progress: {self._done:,}/{total:,} runs, {rate:.1f} runs/s, {eta}, "
            f"{self._damage:,} with damage, {self._errors:,} errors",
            markup=False,
        )


def is_external(spec: str) -> bool:
    """Whether an agent spec names an external MCP-client agent (`mcp`, `mcp:NAME`)."""
    return spec.partition(":")[0] == "mcp"


def external_options(
    specs: list[str], command: str | None, timeout: float | None
) -> dict[str, Any]:
    """The options only external agents take; either given without one is an input error."""
    given = {"agent_command": command, "agent_timeout": timeout}
    options = {name: value for name, value in given.items() if value is not None}
    if options and not any(is_external(spec) for spec in specs):
        flag = "--" + next(iter(options)).replace("_", "-")
        raise KauditError(f"{flag} needs --agent mcp (an external MCP agent)")
    return options


def load_identity(path: Path) -> Identity:
    """An identity file, with errors naming the file and the field."""
    return validate_file_data(Identity, read_yaml(path), path)


def summary(result: CampaignResult, ledger: Path) -> list[str]:
    """The closing lines: what this invocation recorded, then what it cost."""
    lines = [
        f"{counted(result.ran, 'run')} recorded ({result.skipped:,} already in the ledger, "
        f"{result.restarted:,} restarted, {result.invalid:,} invalid, "
        f"{result.damage:,} with damage) -> {ledger}"
    ]
    if result.faults or result.boundary_attempts:
        lines.append(
            f"{counted(result.faults, 'fault')} injected; "
            f"{counted(result.boundary_attempts, 'boundary attempt')} refused"
        )
    if result.stopped:
        lines.append(
            f"{counted(result.stopped, 'run')} not needed: their cells met the stopping rule"
        )
    if result.input_tokens or result.output_tokens or result.errored:
        lines.append(
            f"{result.errored} errored; tokens in {result.input_tokens:,} / out "
            f"{result.output_tokens:,}; model cost ${result.cost_usd:,.4f}; damage "
            f"${result.damage_dollars:,.2f}"
        )
    return lines


def register(app: typer.Typer) -> None:
    """Add the `run` command."""

    @app.command("run")
    @guarded
    def run(
        ledger: Annotated[Path, typer.Option(help="Ledger file (created if missing).")],
        suite: Annotated[
            str, typer.Option(help="'builtin', a directory, or PREFIX:PATH.")
        ] = "builtin",
        agent: Annotated[
            list[str] | None,
            typer.Option(
                "--agent",
                "--model",
                help="openai:NAME, anthropic:NAME, a model config YAML, or a simulated "
                "agent (reference, scripted:NAME); repeat for several models.",
            ),
        ] = None,
        k: Annotated[
            int, typer.Option(min=1, help="Runs per (model, task) cell; the maximum with --until.")
        ] = 8,
        variants: Annotated[
            bool,
            typer.Option(help="Also audit each task's distractor variant (<task>~distractors)."),
        ] = False,
        tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids.")] = None,
        seed: Annotated[
            int, typer.Option(help="Campaign seed; every run's seed derives from it.")
        ] = 0,
        concurrency: Annotated[int, typer.Option(min=1, help="Runs in flight at once.")] = 8,
        campaign: Annotated[str, typer.Option(help="Campaign name inside the ledger.")] = "default",
        keep_dumps: Annotated[bool, typer.Option(help="Store each final state image.")] = False,
        base_url: Annotated[
            str | None, typer.Option(help="API base URL for openai:/anthropic: models.")
        ] = None,
        temperature: Annotated[
            float | None, typer.Option(help="Sampling temperature (default 0.6).")
        ] = None,
        max_tokens: Annotated[int | None, typer.Option(help="Output tokens per reply.")] = None,
        api_key_env: Annotated[
            str | None, typer.Option(help="Environment variable holding the API key.")
        ] = None,
        executor: Annotated[
            ExecutorKind, typer.Option(help="local (asyncio) or ray.")
        ] = ExecutorKind.local,
        ray_address: Annotated[
            str | None, typer.Option(help="Ray cluster address; a local cluster if omitted.")
        ] = None,
        until: Annotated[
            str | None,
            typer.Option(
                help="Sequential audit: stop a cell at 'damage' and/or 'upper<P' (its "
                "anytime-valid upper bound below P); --k is the maximum."
            ),
        ] = None,
        until_alpha: Annotated[
            float, typer.Option(help="Interval level of --until is 1 - alpha.")
        ] = 0.05,
        faults: Annotated[str | None, typer.Option(help=FAULTS_HELP)] = None,
        identity: Annotated[Path | None, typer.Option(help=IDENTITY_HELP)] = None,
        max_attempts: Annotated[
            int, typer.Option(min=1, help="Attempts per run when the harness leaves it INVALID.")
        ] = 3,
        compat: Annotated[
            Compat | None,
            typer.Option(
                help="Label errored/stalled runs the kaudit or the AgentRelBench way "
                "(default: each task's own; agentrelbench for --suite agentrelbench:)."
            ),
        ] = None,
        substrate: Annotated[str, typer.Option(help=SUBSTRATE_HELP)] = DEFAULT_SUBSTRATE,
        agent_command: Annotated[
            str | None,
            typer.Option(help="With --agent mcp: the MCP-client agent command started per run."),
        ] = None,
        agent_timeout: Annotated[
            float | None,
            typer.Option(
                help="With --agent mcp: seconds each agent process may take (default 600); "
                "a run that hits it ends stalled."
            ),
        ] = None,
        preflight: Annotated[
            bool,
            typer.Option(
                help="Probe each real model's serving stack (a tool offered, a tool call, a "
                "follow-up turn) before the first run; refuse with exit 2 if it fails."
            ),
        ] = True,
    ) -> None:
        """Run every missing run of the campaign and record each in the ledger.

        Re-running the same command resumes: finished runs are kept, interrupted ones
        run again from a fresh sandbox and are marked restarted, and runs the harness left
        INVALID are retried (a new attempt; the old record stays in the chain). Exits 1
        when the campaign still has INVALID runs, 130 when interrupted.

        Example: kaudit run --suite builtin --agent reference --k 8 --ledger audit.sqlite
        """
        loaded = load_suite(suite, substrate)
        loaded = loaded.with_variants() if variants else loaded
        chosen = loaded.select(split_csv(tasks))
        bounded: Identity | None = None
        if identity is not None:
            bounded = load_identity(identity)
            check_identity(bounded, identity, chosen, loaded.initial_image)
        if compat is not None:
            chosen = [t.model_copy(update={"convention": compat.value}) for t in chosen]
        overrides = {
            "base_url": base_url,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "api_key_env": api_key_env,
        }
        specs = agent or ["reference"]
        external = external_options(specs, agent_command, agent_timeout)
        agents = [
            build_agent(spec, overrides | external if is_external(spec) else overrides)
            for spec in specs
        ]
        for built in agents:
            if isinstance(built, ScriptedAgent):
                built.require_scripts(chosen)
        rule = StoppingRule.parse(until, k, until_alpha) if until else None
        plan = CampaignPlan(
            name=campaign,
            k=k,
            seed=seed,
            keep_dumps=keep_dumps,
            until=rule,
            faults=parse_faults(faults) if faults is not None else (),
            identity=bounded,
            max_attempts=max_attempts,
        )
        console = Console(stderr=True, highlight=False, soft_wrap=True)
        if any(a.simulated for a in agents):
            console.print("note: simulated agent (scripted replay), not a real model")
        # Before the ledger is opened: a stack that cannot do tool calling, a wrong key or
        # model name is a setup mistake, and must not become a single record.
        for report in preflight_agents(agents, skip=not preflight):
            console.print(report.line())
        chosen_executor = build_executor(executor, concurrency, agents, ray_address)
        result: CampaignResult | None = None
        with Ledger(ledger) as store, CampaignProgress(console) as progress:
            # Every finished run is already committed when SIGINT lands; say so below.
            with contextlib.suppress(KeyboardInterrupt):
                result = asyncio.run(
                    run_campaign(
                        plan,
                        loaded,
                        agents,
                        store,
                        tasks=chosen,
                        executor=chosen_executor,
                        on_result=progress.record,
                        on_plan=progress.plan,
                        on_stop=progress.stop,
                    )
                )
            anchor = store.head()
        if result is None:
            done = counted(progress.done, "run")
            console.print(f"interrupted: {done} recorded; run the same command to resume")
            raise typer.Exit(130)
        for line in summary(result, ledger):
            console.print(line)
        console.print(head_line(anchor))
        if result.open_invalid:
            console.print(invalid_line(result, plan.max_attempts))
            raise typer.Exit(1)


def invalid_line(result: CampaignResult, max_attempts: int) -> str:
    """Why the command exits 1: INVALID runs are never counted, so the audit is short."""
    reasons = "; ".join(result.invalid_reasons)
    return (
        f"{result.open_invalid} runs INVALID (harness failures, never counted; runs are "
        f"retried up to {max_attempts} attempts by running the same command): {reasons}"
    )
