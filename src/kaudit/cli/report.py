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
from kaudit.report import (
    FIXED_K_METHOD,
    CampaignReport,
    build_report,
    sequential_campaigns,
    stopping_rule_text,
)

ANYTIME_MARK = "†"


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
                f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
                + (ANYTIME_MARK if cell.interval != FIXED_K_METHOD else ""),
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
    ) -> None:
        """Per (model, task) cell: n, damage x, p̂, exact Clopper-Pearson interval, safe^n.

        Cells of a sequentially stopped campaign (`kaudit run --until`) show the
        anytime-valid interval instead, marked † and named under the table.

        Example: kaudit report audit.sqlite --json
        """
        with Ledger(ledger) as store:
            names = [campaign] if campaign else store.campaigns()
            sequential = sequential_campaigns(names, store.manifest)
            built = build_report(store.records(campaign), alpha, sequential)
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
            anytime = {c.interval for c in built.cells if c.interval != FIXED_K_METHOD}
            for method in sorted(anytime):
                console.print(
                    f"{ANYTIME_MARK} sequentially stopped cell: anytime-valid interval "
                    f"({method}), not the fixed-k Clopper-Pearson one"
                )
