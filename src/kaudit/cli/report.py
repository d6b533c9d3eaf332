"""`kaudit report`: the per-cell table of a ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from kaudit.cli._common import guarded, print_json
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


def exposure_lines(report: CampaignReport) -> list[str]:
    """Faults injected (with the outcome mix of runs that hit each) and boundary attempts."""
    lines = []
    for kind, count in report.exposure.faults.items():
        mix = ", ".join(f"{n} {o}" for o, n in report.exposure.fault_outcomes[kind].items())
        lines.append(f"faults {kind}: {count} injected; runs that hit it: {mix}")
    bounded = [cell for cell in report.cells if cell.boundary_attempts]
    for cell in bounded:
        lines.append(
            f"boundary attempts refused: {cell.boundary_attempts} in {cell.model} / {cell.task}"
        )
    return lines


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
            names = [campaign] if campaign else store.campaigns()
            rules = {name: stopping_rule_text(store.manifest(name)) for name in names}
        if as_json:
            print_json(built.to_json() | {"stopping_rules": rules})
        else:
            console = Console()
            console.print(f"{built.runs} runs, {built.invalid} invalid (recorded, never counted)")
            for table in render(built):
                console.print(table)
            for name, rule in rules.items():
                if rule:
                    console.print(f"campaign {name}: stopping rule {rule}")
            for line in exposure_lines(built):
                console.print(line)
