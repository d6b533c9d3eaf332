"""`kaudit plan --from-ledger`: the audit size turned into money and time, printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from kaudit.cli._anchor import note_anchor

if TYPE_CHECKING:
    from kaudit._plan import AuditPlan


def print_budgets(made: AuditPlan) -> None:
    """One sentence per model of the ledger, after the note on its anchor."""
    if made.checked is not None:
        note_anchor(made.checked.records, made.checked.anchored_records)
    console = Console(highlight=False)
    for budget in made.budgets:
        console.print(budget.sentence(), soft_wrap=True)
