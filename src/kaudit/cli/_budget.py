"""`kaudit plan --from-ledger`: the audit size turned into money and time, printed."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kaudit.cli._anchor import note_anchor
from kaudit.cli._common import print_json
from kaudit.cli._open import opened
from kaudit.errors import KauditError
from kaudit.ledger import Anchor
from kaudit.report import ledger_budgets


def print_budgets(
    ledger: Path,
    p: float | None,
    detect: float,
    tasks: int | None,
    concurrency: int,
    as_json: bool,
    anchor: Anchor | None = None,
) -> None:
    """One sentence (or JSON object) per model of the ledger, its chain verified first."""
    if p is None:
        raise KauditError("--from-ledger needs --p: the damage probability to plan for")
    with opened(ledger, anchor) as snapshot:  # the anchor's signature was checked
        plans, checked = ledger_budgets(snapshot, p, detect, tasks, concurrency)
    note_anchor(checked.records, checked.anchored_records, as_json)
    if as_json:
        print_json([b.to_json() for b in plans])
        return
    console = Console(highlight=False)
    for plan in plans:
        console.print(plan.sentence(), soft_wrap=True)
