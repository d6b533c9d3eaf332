"""`kaudit export`: a ledger as Parquet, CSV or JSON lines, one row per run."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated

import typer

from kaudit.cli._anchor import HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import err_console, guarded, head_line
from kaudit.cli._plural import counted
from kaudit.ledger import Ledger, RunRecord, reader_anchor, walk_chain, write_export


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
    ) -> None:
        """Write one row per run: every record field, timing per phase, nested fields as JSON.

        The ledger's hash chain is verified first; a broken one is refused (exit 2) unless
        --no-verify. With --head (and --pubkey) only the anchored records are exported.
        Then stderr says how many runs went where, and the ledger's head, so the export
        can be tied to the ledger it came from.

        Example: kaudit export audit.sqlite --to parquet --out runs.parquet
        """
        written = [0]

        def counting(records: Iterable[RunRecord]) -> Iterator[RunRecord]:
            for record in records:
                written[0] += 1
                yield record

        anchor = reader_anchor(head, pubkey, no_verify)
        with Ledger(ledger, readonly=True) as store:
            store.require_campaign(campaign)
            checked = None if no_verify else walk_chain(store, anchor)
            upto = None if checked is None else checked.anchored_records
            write_export(counting(store.records(campaign, upto=upto)), to, out, sys.stdout)
            head_now = store.head()
        if checked is not None:
            note_anchor(checked.records, checked.anchored_records)
        note_spool(ledger)
        where = "stdout" if out is None else str(out)
        err_console.print(
            f"wrote {counted(written[0], 'run')} as {to} to {where}",
            highlight=False,
            soft_wrap=True,
        )
        err_console.print(head_line(head_now), highlight=False, soft_wrap=True)
