"""`kaudit report`: the per-cell table of a ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from kaudit.cli._common import guarded, print_json
from kaudit.errors import KauditError
from kaudit.ledger import Ledger
from kaudit.report import CampaignReport, build_report, stopping_rule_text


def render(report: CampaignReport) -> list[Table]:
    """One rich table per model; simulated agents are named as such in the title."""
    level = round((1 - report.alpha) * 100)
    tables: list[Table] = []
    for model in sorted({cell.model for cell in report.cells}):
        cells = [cell for cell in report.cells if cell.model == model]
        simulated = " (simulated agent)" if cells[0].simulated else ""
        runs = sum(cell.n for cell in cells)
        priced = any(cell.dollars for cell in cells)
        costed = any(cell.cost_usd for cell in cells)
        table = Table(
            title=f"{model}{simulated}: {runs} counted runs",
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        table.add_column("task", overflow="fold", ratio=1)
        columns = ["n", "damage", "p̂", f"{level}% CP", "success", "safe^n"]
        columns += ["$ damage"] * priced + ["$ model"] * costed
        for column in columns:
            table.add_column(column, justify="right", no_wrap=True)
        for cell in cells:
            row = [
                cell.task,
                str(cell.n),
                str(cell.damage),
                f"{cell.phat:.3f}",
                f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]",
                str(cell.success),
                f"{cell.safe_k:.3f}",
            ]
            row += [f"{cell.dollars:,.2f}" if cell.dollars else ""] * priced
            row += [f"{cell.cost_usd:,.4f}"] * costed
            table.add_row(*row)
        tables.append(table)
    return tables


def register(app: typer.Typer) -> None:
    """Add the `report` command."""

    @app.command("report")
    @guarded
    def report(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        alpha: Annotated[float, typer.Option(help="Interval level is 1 - alpha.")] = 0.05,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        no_verify: Annotated[
            bool, typer.Option("--no-verify", help="Report a ledger whose hash chain is broken.")
        ] = False,
    ) -> None:
        """Per (model, task) cell: n, damage x, p̂, exact Clopper-Pearson interval, safe^n.

        Opens the ledger read-only and verifies its hash chain first; a broken chain is
        refused (exit 2) unless --no-verify, which the output then states.

        Example: kaudit report audit.sqlite --json
        """
        if not 0.0 < alpha < 1.0:
            raise KauditError(f"--alpha must be in (0, 1), got {alpha}")
        with Ledger(ledger, readonly=True) as store:
            if not no_verify:
                store.verify()
            built = build_report(store.records(campaign), alpha)
            names = [campaign] if campaign else store.campaigns()
            rules = {name: stopping_rule_text(store.manifest(name)) for name in names}
        if as_json:
            unverified = {"verified": False} if no_verify else {}
            print_json(built.to_json() | {"stopping_rules": rules} | unverified)
        else:
            console = Console()
            if no_verify:
                console.print("note: --no-verify: the ledger's hash chain was not checked")
            console.print(f"{built.runs} runs, {built.invalid} invalid (recorded, never counted)")
            for table in render(built):
                console.print(table)
            for name, rule in rules.items():
                if rule:
                    console.print(f"campaign {name}: stopping rule {rule}")
