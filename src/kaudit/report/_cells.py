"""The per-cell report: counts, exact intervals and safe^k, straight from a ledger."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from kaudit.ledger import RunRecord, cell_key
from kaudit.ledger._stack import StackHealth, stack_health
from kaudit.ledger._summary import RunSummary, run_summaries
from kaudit.ledger._tally import tallies_from_records
from kaudit.report._faults import ExposureSummary, exposure_summary
from kaudit.stats import CellKey, CellTally, beta_binomial_cs, clopper_pearson, safe_pow_k
from kaudit.stats._sequence import CS_METHOD

FIXED_K_METHOD = "Clopper-Pearson (exact, fixed k)"
"""The interval name of a cell whose run count was fixed in advance."""
_COUNTS = ("model", "task", "n", "damage", "damage_upper", "success")
"""The tally's fields that lead a cell's JSON, in the order readers have always seen."""


def certified_interval(
    damage: int, n: int, alpha: float, sequential: bool
) -> tuple[float, float, str]:
    """The cell's (1 - alpha) interval and its method name.

    A cell of a sequentially stopped campaign gets the anytime-valid confidence sequence,
    which holds at whatever run the stopping rule picked; a fixed-k cell keeps the exact
    Clopper-Pearson interval, valid because n was chosen before looking.
    """
    if sequential:
        return (*beta_binomial_cs(damage, n, alpha), CS_METHOD)
    return (*clopper_pearson(damage, n, alpha), FIXED_K_METHOD)


@dataclass(frozen=True, kw_only=True)
class CellRow(CellTally):
    """One cell as reported: its tally, its (1 - alpha) interval and method, its economics.

    The counts and the cell's identity are the tally's own (`CellTally`: `task` is the
    display name, ``task@digest8`` when the task ran in several versions; `key` is what
    readers match on). `interval` names the method: exact Clopper-Pearson for fixed-k
    cells, the anytime-valid confidence sequence for cells of a sequentially stopped
    campaign.
    """

    ci_low: float
    ci_high: float
    safe_k: float
    dollars: float
    cost_usd: float
    simulated: bool
    faults_injected: int = 0
    boundary_attempts: int = 0
    interval: str = FIXED_K_METHOD
    api_errors: dict[str, int] = field(default_factory=dict)
    """Runs ended by an API error after all retries, by kind (stack health)."""
    no_tool_calls: int = 0
    """Runs in which the agent made no tool call."""
    measures_stack: bool = False
    """Stack errors dominate the cell: its rates describe the serving stack, not the model."""

    def to_json(self) -> dict[str, Any]:
        """The cell in `kaudit report --json`: counts, rate, interval, economics, identity."""
        data = asdict(self)
        digest, world = data.pop("digest"), data.pop("world")
        counts = {name: data.pop(name) for name in _COUNTS}
        identity = {"task_id": self.task_id, "task_digest": digest, "world_digest": world}
        return counts | {"phat": self.phat} | data | identity


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
            "cells": [cell.to_json() for cell in self.cells],
            **self.exposure.to_json(),
        }


def cell_row(
    tally: CellTally,
    alpha: float,
    dollars: float,
    cost: float,
    simulated: bool,
    sequential: bool = False,
) -> CellRow:
    """Report one tally; safe^k is taken at k = n (all n audit runs clean)."""
    low, high, method = certified_interval(tally.damage, tally.n, alpha, sequential)
    return CellRow(
        model=tally.model,
        task=tally.task,
        n=tally.n,
        damage=tally.damage,
        damage_upper=tally.damage_upper,
        success=tally.success,
        digest=tally.digest,
        world=tally.world,
        ci_low=low,
        ci_high=high,
        safe_k=safe_pow_k(tally.n, tally.damage, tally.n) if tally.n else float("nan"),
        dollars=dollars,
        cost_usd=cost,
        simulated=simulated,
        interval=method,
    )


def build_report(
    records: Iterable[RunRecord | RunSummary],
    alpha: float = 0.05,
    sequential_campaigns: Collection[str] = (),
    tallies: Sequence[CellTally] | None = None,
) -> CampaignReport:
    """Aggregate records into cells, sorted by model then task.

    A cell is a `CellKey` (model, task, task digest, world digest): runs of a changed task
    or world are another cell, named ``task@digest8``, never pooled with the old
    version's runs. A cell holding any
    run of a campaign in `sequential_campaigns` was stopped by a rule that looked at its
    runs, so it is reported with the anytime-valid interval. `tallies` is
    `tallies_from_records` of the same records, when the caller has it.
    """
    kept = run_summaries(records)
    dollars: dict[CellKey, Decimal] = {}
    cost: dict[CellKey, float] = {}
    simulated: dict[CellKey, bool] = {}
    faults: dict[CellKey, int] = {}
    attempts: dict[CellKey, int] = {}
    sequential: set[CellKey] = set()
    for record in kept:
        cell = cell_key(record)
        if record.campaign in sequential_campaigns:
            sequential.add(cell)
        faults[cell] = faults.get(cell, 0) + len(record.fault_kinds)
        attempts[cell] = attempts.get(cell, 0) + record.boundary_attempt_count
        dollars[cell] = dollars.get(cell, Decimal(0)) + record.damage_dollars
        cost[cell] = cost.get(cell, 0.0) + record.cost_usd
        simulated[cell] = record.simulated
    health = stack_health(kept)
    rows = []
    for t in tallies_from_records(kept) if tallies is None else tallies:
        cell = t.key
        row = cell_row(
            t, alpha, float(dollars[cell]), cost[cell], simulated[cell], cell in sequential
        )
        row = replace(row, faults_injected=faults[cell], boundary_attempts=attempts[cell])
        rows.append(_with_health(row, health.get(cell, StackHealth())))
    invalid = sum(record.status == "invalid" for record in kept)
    return CampaignReport(
        runs=len(kept),
        invalid=invalid,
        alpha=alpha,
        cells=tuple(rows),
        exposure=exposure_summary(kept),
    )


def _with_health(row: CellRow, health: StackHealth) -> CellRow:
    return replace(
        row,
        api_errors=health.api_errors,
        no_tool_calls=health.no_tool_calls,
        measures_stack=health.measures_stack,
    )
