"""`kaudit export`: a ledger as Parquet, CSV or JSON lines, one row per run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from kaudit import export as export_ledger
from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import err_console, guarded, head_line
from kaudit.cli._open import opened
from kaudit.cli._plural import counted


def register(app: typer.Typer) -> None:
    """Add the `export` command."""

    @app.command("export")
    @guarded
    def export(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        to: Annotated[str, typer.Option("--to", help="parquet, csv or jsonl.")] = "jsonl",
        out: Annotated[
            Path | None, typer.Option("--out", help="Output file (stdout when absent).")
        ] = None,
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        no_verify: Annotated[
            bool, typer.Option("--no-verify", help="Export a ledger whose hash chain is broken.")
        ] = False,
        head: HeadOpt = None,
        pubkey: PubkeyOpt = None,
        anchored_prefix: AnchoredPrefixOpt = False,
    ) -> None:
        """Write one row per run: every record field, timing per phase, nested fields as JSON.

        The ledger's hash chain is verified first; a broken one is refused (exit 2) unless
        --no-verify. With --head (and --pubkey) a ledger holding records after the anchor
        is refused; with --anchored-prefix too, only the anchored records are exported.
        Then stderr says how many runs went where, and the ledger's head, so the export
        can be tied to the ledger it came from.

        Example: kaudit export audit.sqlite --to parquet --out runs.parquet
        """
        with opened(
            ledger, head, pubkey, no_verify=no_verify, anchored_prefix=anchored_prefix
        ) as snapshot:
            done = export_ledger(snapshot, to, out, stream=sys.stdout, campaign=campaign)
        if done.verified:
            note_anchor(done.records, done.anchored_records)
        note_spool(ledger)
        where = "stdout" if out is None else str(out)
        err_console.print(
            f"wrote {counted(done.runs, 'run')} as {to} to {where}",
            highlight=False,
            soft_wrap=True,
        )
        err_console.print(head_line(done.head), highlight=False, soft_wrap=True)
