"""Per-cell tallies from ledger records: the only thing the statistics need."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger

if TYPE_CHECKING:
    from kaudit.stats import CellTally


RunFacts = tuple[str, str, bool, bool, bool, bool]
"""(model, task, counted, damage, damage_upper, success) of one run."""


def tally_cells(runs: Iterable[RunFacts]) -> list[CellTally]:
    """(n, damage, damage_upper, success) per (model, task) in first-seen order.

    A run that is not counted (invalid) still makes its cell appear, with n = 0 if no
    counted run follows, so a cell that only ever failed to run is visible.
    """
    from kaudit.stats import CellTally

    cells: dict[tuple[str, str], list[int]] = {}
    for model, task, counted, damage, upper, success in runs:
        counts = cells.setdefault((model, task), [0, 0, 0, 0])
        if counted:
            counts[0] += 1
            counts[1] += damage
            counts[2] += upper
            counts[3] += success
    return [
        CellTally(model=m, task=t, n=n, damage=x, damage_upper=xu, success=s)
        for (m, t), (n, x, xu, s) in cells.items()
    ]


def tallies_from_records(records: Iterable[RunRecord]) -> list[CellTally]:
    """Tallies per (model, task), sorted; invalid runs are not counted."""
    facts = (
        (
            r.model,
            r.task,
            r.status == "labeled",
            r.counts_as_damage,
            r.counts_as_damage_upper,
            r.success,
        )
        for r in records
    )
    return sorted(tally_cells(facts), key=lambda t: (t.model, t.task))


def read_tallies(path: Path, campaign: str | None = None) -> list[CellTally]:
    """Tallies of every cell in the ledger file at `path`."""
    with Ledger(path) as ledger:
        return tallies_from_records(ledger.records(campaign))
