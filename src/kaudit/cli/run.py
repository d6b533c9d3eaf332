"""`kaudit run`: execute a campaign (models × tasks × k) into a ledger, resuming if it exists."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.agents import make_agent
from kaudit.cli._common import guarded, split_csv
from kaudit.harness import CampaignPlan, LocalExecutor, run_campaign
from kaudit.ledger import Ledger
from kaudit.suites import load_suite


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
            typer.Option("--agent", "--model", help="Agent spec; repeat for several models."),
        ] = None,
        k: Annotated[int, typer.Option(min=1, help="Runs per (model, task) cell.")] = 8,
        tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids.")] = None,
        seed: Annotated[
            int, typer.Option(help="Campaign seed; every run's seed derives from it.")
        ] = 0,
        concurrency: Annotated[int, typer.Option(min=1, help="Runs in flight at once.")] = 8,
        campaign: Annotated[str, typer.Option(help="Campaign name inside the ledger.")] = "default",
        keep_dumps: Annotated[bool, typer.Option(help="Store each final state image.")] = False,
    ) -> None:
        """Run every missing run of the campaign and record each in the ledger.

        Re-running the same command resumes: finished runs are kept, missing ones run.

        Example: kaudit run --suite builtin --agent reference --k 8 --ledger audit.sqlite
        """
        loaded = load_suite(suite)
        chosen = loaded.select(split_csv(tasks))
        agents = [make_agent(spec) for spec in (agent or ["reference"])]
        plan = CampaignPlan(name=campaign, k=k, seed=seed, keep_dumps=keep_dumps)
        console = Console(stderr=True, highlight=False, soft_wrap=True)
        if any(a.simulated for a in agents):
            console.print("note: simulated agent (scripted replay), not a real model")
        with Ledger(ledger) as store:
            result = asyncio.run(
                run_campaign(
                    plan, loaded, agents, store, tasks=chosen, executor=LocalExecutor(concurrency)
                )
            )
        console.print(
            f"{result.ran} runs recorded ({result.skipped} already in the ledger, "
            f"{result.restarted} restarted, {result.invalid} invalid, {result.damage} with damage) "
            f"-> {ledger}"
        )
