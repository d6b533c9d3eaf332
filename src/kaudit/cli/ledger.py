"""`kaudit ledger`: verify, import into and export from a ledger file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._common import guarded
from kaudit.ledger import IMPORTED, Ledger, export_records, import_runs, read_agentrelbench_verdicts


def register(app: typer.Typer) -> None:
    """Add the `ledger` group."""
    group = typer.Typer(help="Verify, import into and export from ledgers.", no_args_is_help=True)
    app.add_typer(group, name="ledger")

    @group.command("verify")
    @guarded
    def verify(ledger: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
        """Check every record's hash and link; exits 2 at the first rewritten record.

        Example: kaudit ledger verify audit.sqlite
        """
        with Ledger(ledger) as store:
            count = store.verify()
        Console(highlight=False).print(f"{count} records, hash chain intact")

    @group.command("import")
    @guarded
    def import_(
        ledger: Annotated[Path, typer.Option(help="Ledger file (created if missing).")],
        model_file: Annotated[
            list[str], typer.Option(help="MODEL=PATH of an AgentRelBench verdicts.jsonl; repeat.")
        ],
        campaign: Annotated[
            str, typer.Option(help="Campaign name for the imported runs.")
        ] = IMPORTED,
    ) -> None:
        """Import published AgentRelBench verdicts (one model per file) into a ledger.

        Importing the same file again adds nothing.

        Example: kaudit ledger import --ledger arb.sqlite --model-file qwen3-32b=verdicts.jsonl
        """
        added = skipped = 0
        with Ledger(ledger) as store:
            for spec in model_file:
                model, sep, path = spec.partition("=")
                if not sep or not model or not path:
                    raise typer.BadParameter(f"expected MODEL=PATH, got {spec!r}")
                a, s = import_runs(store, read_agentrelbench_verdicts(Path(path), model), campaign)
                added, skipped = added + a, skipped + s
        Console(highlight=False).print(
            f"{added} runs imported, {skipped} already present -> {ledger}"
        )

    @group.command("export")
    @guarded
    def export(
        ledger: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
        fmt: Annotated[
            str, typer.Option("--format", help="jsonl (whole records) or csv.")
        ] = "jsonl",
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
    ) -> None:
        """Write the ledger's records to stdout.

        Example: kaudit ledger export audit.sqlite --format csv > runs.csv
        """
        with Ledger(ledger) as store:
            sys.stdout.write(export_records(store.records(campaign), fmt))
