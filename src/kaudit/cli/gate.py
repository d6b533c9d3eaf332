"""`kaudit gate`: grant or deny an authority level on a ledger's evidence."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit import decide
from kaudit._printable import printable
from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import guarded, print_error, print_json
from kaudit.cli._gate_text import render
from kaudit.cli._open import opened_for_gate
from kaudit.gate import GatePolicy
from kaudit.ledger._reader_anchor import anchor_json

DENY_EXIT = 3
REFUSED_EXIT = 2


class AuthorityLevel(StrEnum):
    """How much the agent may do on its own."""

    propose = "propose"
    write_with_approval = "write_with_approval"
    autonomous_write = "autonomous_write"


def register(app: typer.Typer) -> None:
    """Add the `gate` command."""

    @app.command("gate")
    @guarded
    def gate(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        authority: Annotated[AuthorityLevel, typer.Option(help="The authority asked for.")],
        policy: Annotated[
            Path | None, typer.Option(help="Policy YAML; the built-in default if omitted.")
        ] = None,
        model: Annotated[
            str | None, typer.Option(help="The model to decide on, when the ledger has several.")
        ] = None,
        campaign: Annotated[str | None, typer.Option(help="Only this campaign's runs.")] = None,
        head: HeadOpt = None,
        pubkey: PubkeyOpt = None,
        anchored_prefix: AnchoredPrefixOpt = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Verify the ledger, then grant (exit 0) or deny (exit 3) an authority level.

        A ledger that fails its check (a broken chain, a failed --head or --pubkey) is
        denied with the check's message as the first reason, and the exit code is 2,
        as for every reader that refuses a ledger.

        The policy names per level the runs per cell, damage bounds, fault scenarios and
        boundary probes needed; a suite task never run, or a required scenario run fewer
        times than its minimum, is untested and denies. Every cell gets the anytime-valid
        bound, however its runs were collected. With --head (and --pubkey) the ledger must
        also still hold its anchored record, and a record after it denies (exit 2) unless
        --anchored-prefix, which takes the anchored records alone as the evidence.

        Example: kaudit gate audit.sqlite --authority autonomous_write --json
        """
        with opened_for_gate(ledger, head, pubkey, anchored_prefix) as snapshot:
            result = decide(snapshot, authority.value, policy=policy, model=model,
                            campaign=campaign)  # fmt: skip
        note_anchor(result.chain_records, result.anchored_records, as_json)
        note_spool(ledger)
        if as_json:
            print_json(
                result.to_json() | anchor_json(result.chain_records, result.anchored_records)
            )
        else:
            console = Console(highlight=False, soft_wrap=True)
            for line in render(result):
                console.print(printable(line), markup=False)
        if result.refused is not None:
            print_error(result.refused)  # as `kaudit ledger verify` words it
            raise typer.Exit(REFUSED_EXIT)
        if result.decision == "deny":
            raise typer.Exit(DENY_EXIT)

    @app.command("gate-schema")
    def gate_schema() -> None:
        """Print the JSON Schema of gate policy files, for editors to validate them.

        Example: kaudit gate-schema > gate-policy.schema.json
        """
        print_json(GatePolicy.model_json_schema())
