"""`kaudit substrate`: what kaudit leaves on a substrate's server, and cleaning it up."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kaudit.cli._common import guarded, print_json
from kaudit.postgres import prune_postgres
from kaudit.substrate import Substrate
from kaudit.suites import load_suite


def register(app: typer.Typer) -> None:
    """Add the `substrate` group."""
    group = typer.Typer(help="Clean up what kaudit leaves on a server.", no_args_is_help=True)
    app.add_typer(group, name="substrate")
    group.command("prune")(guarded(prune))


def prune(
    substrate: Annotated[
        str, typer.Option(help="The PostgreSQL server: postgresql://USER@HOST:PORT/DB.")
    ],
    keep_suite: Annotated[
        list[str] | None,
        typer.Option(
            "--keep-suite",
            help="Keep only the templates these suites use (repeatable); without it, "
            "every template built by this kaudit is kept.",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Say what would be dropped; drop nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Drop kaudit databases on a PostgreSQL server that nobody uses any more.

    Run databases of killed processes (their owner is gone), half-built templates, and
    templates built by other kaudit versions, or with --keep-suite every template those
    suites do not use. A database of a live process, on any machine, is never dropped.

    Example: kaudit substrate prune --substrate postgresql://postgres@localhost/postgres --dry-run
    """
    keep: list[Substrate] | None = None
    if keep_suite:
        keep = []
        for ref in keep_suite:
            keep += load_suite(ref, check=False).substrates_on(substrate)
    done = prune_postgres(substrate, keep=keep, dry_run=dry_run)
    if as_json:
        print_json([entry.__dict__ for entry in done])
        return
    console = Console(highlight=False)
    table = Table()
    for column in ("action", "kind", "database", "run / world", "why"):
        table.add_column(column)
    for entry in done:
        label = entry.run_id or entry.world or ""
        table.add_row(entry.action, entry.kind, entry.name, label, entry.reason)
    if done:
        console.print(table)
    dropped = sum(entry.action != "kept" for entry in done)
    verb = "would be dropped (dry run)" if dry_run else "dropped"
    console.print(f"{dropped} databases {verb}, {len(done) - dropped} kept")
