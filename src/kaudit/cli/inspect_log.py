"""`kaudit import-inspect`: Inspect AI eval logs of `kaudit/suite` into a kaudit ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._common import guarded
from kaudit.integrations import import_inspect_logs
from kaudit.ledger import Ledger


def register(app: typer.Typer) -> None:
    """Add the `import-inspect` command."""

    @app.command("import-inspect")
    @guarded
    def import_inspect(
        logs: Annotated[list[Path], typer.Argument(help="Inspect .eval/.json log files.")],
        ledger: Annotated[Path, typer.Option(help="Ledger file (created if missing).")],
        campaign: Annotated[
            str | None, typer.Option(help="Campaign name (default inspect:<eval run id>).")
        ] = None,
    ) -> None:
        """Append each sample (task, epoch) of Inspect logs to the ledger as one run.

        Samples already in the ledger are skipped, so importing twice adds nothing.

        Example: kaudit import-inspect logs/*.eval --ledger audit.sqlite
        """
        with Ledger(ledger) as store:
            count = import_inspect_logs(store, logs, campaign)
        Console(stderr=True, highlight=False).print(
            f"{count.added} runs imported ({count.invalid} invalid, {count.skipped} already "
            f"in the ledger) -> {ledger}"
        )
