"""`kaudit report`: the per-cell tables of a ledger, or its self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit._require import require_probability
from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.cli._open import opened
from kaudit.cli._tables import print_blocks


def register(app: typer.Typer) -> None:
    """Add the `report` command."""

    @app.command("report")
    @guarded
    def report(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        alpha: Annotated[float, typer.Option(help="Interval level is 1 - alpha.")] = 0.05,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        html: Annotated[
            Path | None, typer.Option("--html", help="Also write the HTML report to this file.")
        ] = None,
        model_order: Annotated[
            str | None, typer.Option(help="Capability order a,b,c for the HTML gradient.")
        ] = None,
        no_verify: Annotated[
            bool, typer.Option("--no-verify", help="Report a ledger whose hash chain is broken.")
        ] = False,
        head: HeadOpt = None,
        pubkey: PubkeyOpt = None,
        anchored_prefix: AnchoredPrefixOpt = False,
    ) -> None:
        """Per (model, task) cell: n, damage x, p̂, exact Clopper-Pearson interval, safe^n.

        Cells of a sequentially stopped campaign (`kaudit run --until`) show the
        anytime-valid interval instead, marked † and named under the table. Also the
        sub-label and severity mix per cell, safe^k / pass^k / miss rates,
        transcript grading against the state, and damage economics. `--html FILE` writes
        one self-contained page with figures and a run viewer. Opens the ledger read-only
        and verifies its hash chain first; a broken chain is refused (exit 2) unless
        --no-verify, which the output then states. With --head (and --pubkey) the chain
        must still hold that anchor, and a ledger holding records after it is refused
        unless --anchored-prefix, which reads the anchored records alone.

        Example: kaudit report audit.sqlite --html report.html
        """
        require_probability("alpha", alpha)  # before the ledger is read
        from kaudit import read
        from kaudit.ledger._outputs import refuse_sqlite_output

        if html is not None:  # before the read: a page never replaces a ledger
            refuse_sqlite_output(html, ledger)
        with opened(
            ledger, head, pubkey, no_verify=no_verify, anchored_prefix=anchored_prefix
        ) as snapshot:
            built = read(snapshot, campaign=campaign, alpha=alpha)
            if html is not None:  # its run viewer shows the verified records, re-read checked
                built.write_html(html, split_csv(model_order))
        note_anchor(built.records, built.anchored_records, as_json, built.grade_anchor)
        note_spool(ledger)
        if as_json:
            print_json(built.to_json(view="cells"))
            return
        print_blocks(built.blocks(html, view="cells"), Console(highlight=False))
