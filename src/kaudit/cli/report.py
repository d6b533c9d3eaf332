"""`kaudit report`: the per-cell table of a ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kaudit.cli._common import guarded, print_json
from kaudit.ledger import Ledger
from kaudit.report import CampaignReport, build_report


def render(report: CampaignReport) -> Table:
    """The report as a rich table."""
    level = round((1 - report.alpha) * 100)
    simulated = any(cell.simulated for cell in report.cells)
    title = f"{report.runs} runs, {report.invalid} invalid (never counted)"
    if simulated:
        title += " — simulated agents marked *"
    table = Table(title=title)
    for column in (
        "model",
        "task",
        "n",
        "damage",
        "p̂",
        f"{level}% CP",
        "success",
        "safe^n",
        "$ damage",
    ):
        table.add_column(column, justify="left" if column in ("model", "task") else "right")
    for cell in report.cells:
        table.add_row(
            cell.model + (" *" if cell.simulated else ""),
            cell.task,
            str(cell.n),
            str(cell.damage),
            f"{cell.phat:.3f}",
            f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]",
            str(cell.success),
            f"{cell.safe_k:.3f}",
            f"{cell.dollars:,.2f}" if cell.dollars else "",
        )
    return table


def register(app: typer.Typer) -> None:
    """Add the `report` command."""

    @app.command("report")
    @guarded
    def report(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        alpha: Annotated[float, typer.Option(help="Interval level is 1 - alpha.")] = 0.05,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Per (model, task) cell: n, damage x, p̂, exact Clopper-Pearson interval, safe^n.

        Example: kaudit report audit.sqlite --json
        """
        with Ledger(ledger) as store:
            built = build_report(store.records(campaign), alpha)
        if as_json:
            print_json(built.to_json())
        else:
            Console().print(render(built))
