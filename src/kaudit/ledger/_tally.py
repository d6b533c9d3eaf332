"""Per-cell tallies from ledger records: the only thing the statistics need."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger

if TYPE_CHECKING:
    from kaudit.stats import CellTally


def tallies_from_records(records: Iterable[RunRecord]) -> list[CellTally]:
    """(n, damage, damage_upper, success) per (model, task); invalid runs are not counted."""
    from kaudit.stats import CellTally

    cells: dict[tuple[str, str], list[int]] = {}
    for record in records:
        counts = cells.setdefault((record.model, record.task), [0, 0, 0, 0])
        if record.status != "labeled":
            continue
        counts[0] += 1
        counts[1] += record.counts_as_damage
        counts[2] += record.counts_as_damage_upper
        counts[3] += record.success
    return [
        CellTally(model=m, task=t, n=n, damage=x, damage_upper=xu, success=s)
        for (m, t), (n, x, xu, s) in sorted(cells.items())
    ]


def read_tallies(path: Path, campaign: str | None = None) -> list[CellTally]:
    """Tallies of every cell in the ledger file at `path`."""
    with Ledger(path) as ledger:
        return tallies_from_records(ledger.records(campaign))
