"""The per-cell report: counts, exact intervals and safe^k, straight from a ledger."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from kaudit.ledger import RunRecord, tallies_from_records
from kaudit.report._faults import ExposureSummary, exposure_summary
from kaudit.stats import CellTally, clopper_pearson, safe_pow_k


@dataclass(frozen=True)
class CellRow:
    """One (model, task) cell as reported. Intervals are exact Clopper-Pearson at 1 - alpha."""

    model: str
    task: str
    n: int
    damage: int
    damage_upper: int
    success: int
    phat: float
    ci_low: float
    ci_high: float
    safe_k: float
    dollars: float
    cost_usd: float
    simulated: bool
    faults_injected: int = 0
    boundary_attempts: int = 0


@dataclass(frozen=True)
class CampaignReport:
    """Every cell plus run counts; `invalid` runs are listed, never counted in a cell."""

    runs: int
    invalid: int
    alpha: float
    cells: tuple[CellRow, ...]
    exposure: ExposureSummary = field(default_factory=ExposureSummary)

    def to_json(self) -> dict[str, Any]:
        """The `kaudit report --json` document."""
        return {
            "runs": self.runs,
            "invalid": self.invalid,
            "alpha": self.alpha,
            "cells": [asdict(cell) for cell in self.cells],
            **self.exposure.to_json(),
        }


def cell_row(
    tally: CellTally, alpha: float, dollars: float, cost: float, simulated: bool
) -> CellRow:
    """Report one tally; safe^k is taken at k = n (all n audit runs clean)."""
    low, high = clopper_pearson(tally.damage, tally.n, alpha)
    phat = tally.damage / tally.n if tally.n else float("nan")
    return CellRow(
        model=tally.model,
        task=tally.task,
        n=tally.n,
        damage=tally.damage,
        damage_upper=tally.damage_upper,
        success=tally.success,
        phat=phat,
        ci_low=low,
        ci_high=high,
        safe_k=safe_pow_k(tally.n, tally.damage, tally.n) if tally.n else float("nan"),
        dollars=dollars,
        cost_usd=cost,
        simulated=simulated,
    )


def build_report(records: Iterable[RunRecord], alpha: float = 0.05) -> CampaignReport:
    """Aggregate records into cells, sorted by model then task.

    A cell is (model, task, task digest): runs of a changed task are another cell,
    named ``task@digest8``, never pooled with the old version's runs.
    """
    kept: Sequence[RunRecord] = list(records)
    Cell = tuple[str, str, str | None]
    dollars: dict[Cell, Decimal] = {}
    cost: dict[Cell, float] = {}
    simulated: dict[Cell, bool] = {}
    faults: dict[Cell, int] = {}
    attempts: dict[Cell, int] = {}
    for record in kept:
        cell = (record.model, record.task, record.task_digest)
        faults[cell] = faults.get(cell, 0) + len(record.faults)
        attempts[cell] = attempts.get(cell, 0) + len(record.boundary_attempts)
        dollars[cell] = dollars.get(cell, Decimal(0)) + record.damage_dollars
        cost[cell] = cost.get(cell, 0.0) + record.cost_usd
        simulated[cell] = bool(record.extra.get("simulated", False))
    rows = []
    for t in tallies_from_records(kept):
        cell = (t.model, t.task_id, t.digest)
        row = cell_row(t, alpha, float(dollars[cell]), cost[cell], simulated[cell])
        rows.append(replace(row, faults_injected=faults[cell], boundary_attempts=attempts[cell]))
    invalid = sum(record.status == "invalid" for record in kept)
    return CampaignReport(
        runs=len(kept),
        invalid=invalid,
        alpha=alpha,
        cells=tuple(rows),
        exposure=exposure_summary(kept),
    )
