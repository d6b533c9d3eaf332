"""What the measured damage and model spend mean in money, per model.

Every interval comes from the library's cluster bootstrap over cells (runs of one cell
are not independent; the cell is the unit resampled), and every audit size from
:func:`kaudit.stats.plan_cells`, so the report never computes a statistic its own way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from kaudit._require import require_at_least, require_probability
from kaudit.ledger import RunRecord, cell_key
from kaudit.ledger._summary import RunSummary
from kaudit.ledger._tally import tallies_from_records
from kaudit.stats import (
    CellKey,
    CellTally,
    bootstrap_ratio,
    check_tail,
    plan_cells,
    resample_counts,
)
from kaudit.stats._bootstrap import percentile_interval
from kaudit.stats._plan import CellPlan

__all__ = ["ModelEconomics", "economics"]

PER = 1000
"""Runs in the 'per 1,000 runs' figures."""


@dataclass(frozen=True)
class ModelEconomics:
    """Money figures of one model's counted runs.

    Attributes:
        model: The model.
        runs: Counted runs (INVALID runs are not).
        cells: Cells the bootstrap resamples.
        damage_per_run: Expected damage dollars per run (total damage $ / runs).
        damage_ci: Percentile cluster-bootstrap interval of ``damage_per_run``; NaN with
            fewer than two cells (resampling one cell has no spread).
        spend_per_run: Model dollars per recorded run, INVALID runs included (they were paid).
        loading: The loading factor of the illustrative price.
        plans: Conservative audit runs per damage-producing cell.
        interval: Which interval ``damage_ci`` is.
        tail_warning: Why ``damage_ci`` cannot be trusted (heavy-tailed damage dollars:
            one run dominating, or a tail index below 2), or None.
    """

    model: str
    runs: int
    cells: int
    damage_per_run: float
    damage_ci: tuple[float, float]
    spend_per_run: float
    loading: float
    plans: tuple[CellPlan, ...]
    interval: str = "percentile bootstrap over tasks"
    tail_warning: str | None = None

    @property
    def damage_per_1000(self) -> float:
        """Expected damage dollars per 1,000 runs."""
        return self.damage_per_run * PER

    @property
    def risk_loaded_price(self) -> float:
        """Illustrative price per 1,000 runs: expected loss + loading × (upper − expected).

        An illustration of pricing from the interval, not a quote: a real premium adds
        expenses, tail scenarios and correlation across customers.
        """
        upper = self.damage_ci[1]
        if math.isnan(upper):
            return math.nan
        return PER * (self.damage_per_run + self.loading * (upper - self.damage_per_run))


def _dollars(record: RunRecord | RunSummary) -> Decimal:
    return record.damage_dollars if record.counts_as_damage else Decimal(0)


def _model_economics(
    model: str,
    records: Sequence[RunRecord | RunSummary],
    *,
    alpha: float,
    detect: float,
    loading: float,
    bootstrap: int,
    seed: int,
    tallies: Sequence[CellTally],
) -> ModelEconomics:
    counted = [r for r in records if r.status == "labeled"]
    sums: dict[CellKey, Decimal] = {}
    runs: dict[CellKey, int] = {}
    for record in counted:
        # By cell identity: two versions of a task are two clusters, never one.
        cell = cell_key(record)
        sums[cell] = sums.get(cell, Decimal(0)) + _dollars(record)
        runs[cell] = runs.get(cell, 0) + 1
    tasks = sorted(runs, key=lambda c: (c.task, c.digest or "", c.world or ""))
    total_runs = sum(runs.values())
    total = sum(sums.values(), Decimal(0))
    per_run = float(total / total_runs) if total_runs else math.nan
    counts = resample_counts(len(tasks), bootstrap, seed)
    draws = bootstrap_ratio(
        [float(sums[t]) for t in tasks], [float(runs[t]) for t in tasks], counts
    )
    # One cell gives every resample the same value: no interval rather than a false [x, x].
    enough = len(tasks) >= 2 and bootstrap > 0
    interval = percentile_interval(draws, alpha) if enough else (math.nan, math.nan)
    spend = math.fsum(r.cost_usd for r in records) / len(records) if records else math.nan
    tail = check_tail([float(_dollars(r)) for r in counted])
    plans = plan_cells([t for t in tallies if t.model == model], 1.0 - detect, alpha)
    return ModelEconomics(
        model=model,
        runs=total_runs,
        cells=len(tasks),
        damage_per_run=per_run,
        damage_ci=interval,
        spend_per_run=spend,
        loading=loading,
        plans=tuple(plans),
        interval=f"{1 - alpha:.0%} percentile bootstrap over tasks",
        tail_warning=tail.warning,
    )


def economics(
    records: Iterable[RunRecord | RunSummary],
    *,
    alpha: float = 0.05,
    detect: float = 0.95,
    loading: float = 0.5,
    bootstrap: int = 2000,
    seed: int = 0,
    tallies: Sequence[CellTally] | None = None,
) -> list[ModelEconomics]:
    """Per model: expected damage $ per run with its interval, spend, price, audit sizes.

    ``detect`` is the wanted chance that an audit sees a cell's damage at least once;
    audit sizes use the cell's Clopper-Pearson (1 − alpha) lower bound of p.
    `tallies` is `tallies_from_records` of the same records, when the caller has it.
    """
    require_probability("detect", detect)
    require_at_least("loading", loading, 0)
    kept = list(records)
    cells = tallies_from_records(kept) if tallies is None else tallies
    by_model: dict[str, list[RunRecord | RunSummary]] = {}
    for record in kept:
        by_model.setdefault(record.model, []).append(record)
    return [
        _model_economics(
            model,
            by_model[model],
            alpha=alpha,
            detect=detect,
            loading=loading,
            bootstrap=bootstrap,
            seed=seed,
            tallies=cells,
        )
        for model in sorted(by_model)
    ]
