"""`kaudit run`: execute a campaign (models × tasks × k) into a ledger, resuming if it exists."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated

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

from kaudit import AuditHooks, AuditResult, audit
from kaudit._printable import printable
from kaudit.cli._common import guarded, head_line, split_csv
from kaudit.cli._options import FaultsOpt, IdentityOpt, SubstrateOpt, SuiteOpt
from kaudit.cli._plural import counted
from kaudit.ledger._spool import spool_dir
from kaudit.report._sources import Compat
from kaudit.substrate._choice import DEFAULT_SUBSTRATE

if TYPE_CHECKING:
    from kaudit.agents import Agent
    from kaudit.agents.chat import PreflightReport
    from kaudit.harness import RunJob
    from kaudit.harness._campaign import CampaignResult
    from kaudit.harness._world_preflight import WorldPreflight
    from kaudit.ledger import RunRecord


class CampaignProgress(AuditHooks):
    """Runs done / total, rate, ETA, errors, damage, tokens and dollars.

    On a terminal a live bar; piped or redirected, one plain line at most every
    `every` seconds, so a slow campaign (PostgreSQL, a real model) still shows it is
    moving in a log while a fast one prints nothing extra.
    """

    def __init__(self, console: Console, every: float = 10.0) -> None:
        super().__init__()
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
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def agents(self, agents: Sequence[Agent]) -> None:
        """Say so when an agent is simulated: its numbers are no model's."""
        if any(a.simulated for a in agents):
            self._console.print("note: simulated agent (scripted replay), not a real model")

    def preflight(self, report: PreflightReport | WorldPreflight) -> None:
        """One line per real model or agent program that passed its preflight."""
        self._console.print(report.line())

    def plan(self, counts: CampaignResult) -> None:
        """Start the bar, sized to the runs this invocation has to do."""
        self._progress.start()
        self._started = self._last_line = time.monotonic()
        todo = counts.planned - counts.skipped
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
        self._tokens += record.usage.tokens
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
    if result.stopped > result.budget_refused:
        lines.append(
            f"{counted(result.stopped - result.budget_refused, 'run')} not needed: their "
            "cells met the stopping rule"
        )
    if result.budget_stop:
        lines.append(result.budget_stop)
    usage = result.usage
    if usage.tokens or result.errored:
        lines.append(
            f"{result.errored} errored; tokens in {usage.input_tokens:,} / out "
            f"{usage.output_tokens:,}; model cost ${usage.cost_usd:,.4f}; damage "
            f"${result.damage_dollars:,.2f}"
        )
    if result.served_appended:
        lines.append(
            f"{counted(result.served_appended, 'served run')} from {spool_dir(ledger)} "
            "appended (they finished while this campaign held the ledger)"
        )
    lines += [f"warning: {kept}" for kept in result.served_kept]
    return lines


def register(app: typer.Typer) -> None:
    """Add the `run` command."""

    @app.command("run")
    @guarded
    def run(
        ledger: Annotated[Path, typer.Option(help="Ledger file (created if missing).")],
        suite: SuiteOpt = "builtin",
        agent: Annotated[
            list[str] | None,
            typer.Option(
                "--agent",
                "--model",
                help="The agent under audit, one of these kinds (repeat for several): "
                "openai:NAME, anthropic:NAME or a model config YAML (a chat model); "
                "command[:NAME] (your own program, --agent-command, acting on the run's "
                "world with its own code; the default when --agent-command is given); "
                "mcp[:NAME] (an MCP-client program, --agent-command, using kaudit's tools); "
                "reference or scripted:NAME (simulated); or a kind a plugin registers.",
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
            str, typer.Option(help="local (asyncio), ray, or an executor a plugin registers.")
        ] = "local",
        ray_address: Annotated[
            str | None, typer.Option(help="Ray cluster address; a local cluster if omitted.")
        ] = None,
        until: Annotated[
            str | None,
            typer.Option(
                help="Sequential audit: stop a cell at 'damage' and/or 'upper<P' (its "
                "anytime-valid one-sided upper bound below P, as the gate's); --k is the "
                "maximum."
            ),
        ] = None,
        until_alpha: Annotated[
            float,
            typer.Option(help="--until's bound is one-sided at alpha/2, as the gate's alpha."),
        ] = 0.05,
        faults: FaultsOpt = None,
        identity: IdentityOpt = None,
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
        substrate: SubstrateOpt = DEFAULT_SUBSTRATE,
        agent_command: Annotated[
            str | None,
            typer.Option(
                help="With --agent command or mcp: the program started per run, with the "
                "run's world in KAUDIT_DB_PATH / KAUDIT_DATABASE_URL (docs/own-agent.md)."
            ),
        ] = None,
        agent_timeout: Annotated[
            float | None,
            typer.Option(
                help="With --agent command or mcp: seconds each agent process may take "
                "(default 600); "
                "a run that hits it ends stalled."
            ),
        ] = None,
        tools_command: Annotated[
            str | None,
            typer.Option(
                help="With --agent command: a third-party MCP server started per run ({db}: "
                "the world file, {url}: its URL), served to the agent at KAUDIT_MCP_URL "
                "through kaudit's recording proxy (docs/tool-door.md)."
            ),
        ] = None,
        tools_tag: Annotated[
            str | None,
            typer.Option(
                help="With --tools-command: NAME=TAG[,...] tags the server's tools read, "
                "reversible_write or irreversible (default: its annotations, else irreversible)."
            ),
        ] = None,
        upstream: Annotated[
            str | None,
            typer.Option(
                help="With --agent command or mcp: the model server (URL, or a model config "
                "YAML with its price) the agent's model calls go to, through kaudit's "
                "recording proxy (OPENAI_BASE_URL / ANTHROPIC_BASE_URL; docs/model-proxy.md)."
            ),
        ] = None,
        max_cost_usd: Annotated[
            float | None,
            typer.Option(
                help="With --upstream: dollars one run may spend on model calls; a run "
                "over it ends stalled."
            ),
        ] = None,
        max_run_tokens: Annotated[
            int | None,
            typer.Option(
                help="With --upstream: tokens (in + out) one run may spend; a run over it "
                "ends stalled."
            ),
        ] = None,
        max_campaign_cost_usd: Annotated[
            float | None,
            typer.Option(
                help="No new run starts once the campaign's runs have cost this many "
                "dollars; run again with a higher cap to continue."
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
        console = Console(stderr=True, highlight=False, soft_wrap=True)
        with CampaignProgress(console) as progress:
            result = audit(
                suite,
                agent or (["command"] if agent_command else ["reference"]),
                ledger=ledger,
                k=k,
                seed=seed,
                concurrency=concurrency,
                tasks=split_csv(tasks),
                variants=variants,
                faults=faults,
                identity=identity,
                substrate=substrate,
                stopping=until,
                stopping_alpha=until_alpha,
                campaign=campaign,
                keep_dumps=keep_dumps,
                compat=None if compat is None else compat.value,
                model_options={
                    "base_url": base_url,
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                    "api_key_env": api_key_env,
                },
                agent_command=agent_command,
                agent_timeout=agent_timeout,
                tools_command=tools_command,
                tools_tag=tools_tag,
                upstream=upstream,
                max_cost_usd=max_cost_usd,
                max_run_tokens=max_run_tokens,
                max_campaign_cost_usd=max_campaign_cost_usd,
                executor=executor,
                ray_address=ray_address,
                max_attempts=max_attempts,
                preflight=preflight,
                hooks=progress,
            )
        if result.counts is None:
            done = counted(result.recorded, "run")
            console.print(f"interrupted: {done} recorded; run the same command to resume")
            raise typer.Exit(130)
        for line in summary(result.counts, ledger):
            console.print(printable(line), markup=False)
        console.print(head_line(result.head))
        if result.open_invalid:
            console.print(printable(invalid_line(result)), markup=False)
            raise typer.Exit(1)


def invalid_line(result: AuditResult) -> str:
    """Why the command exits 1: INVALID runs are never counted, so the audit is short."""
    reasons = "; ".join(result.counts.invalid_reasons if result.counts else ())
    return (
        f"{counted(result.open_invalid, 'run')} INVALID (harness failures, never counted; runs are "
        f"retried up to {result.max_attempts} attempts by running the same command): {reasons}"
    )
