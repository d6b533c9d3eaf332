"""Planning: how many audit runs it takes to see damage at least once."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kaudit._require import require_at_least, require_probability
from kaudit.errors import InputError

from ._intervals import clopper_pearson
from ._population import PopulationMiss, model_populations
from ._tally import CellTally

__all__ = [
    "CellPlan",
    "PopulationPlan",
    "all_clean_probability",
    "plan_cells",
    "population_plans",
    "runs_to_detect",
]

SHOWN_K = (1, 8, 32, 128)
"""Audit sizes a population plan states its conservative miss rate at."""


def all_clean_probability(p: float, k: int) -> float:
    """Chance that k independent runs of a cell with damage probability p all look clean.

    ``(1 − p)**k``, the geometric tail that :func:`runs_to_detect` inverts; it is the
    audit decay curve drawn in the HTML report.
    """
    require_probability("p", p, zero=True, one=True)
    require_at_least("k", k, 0)
    return (1.0 - p) ** k


def runs_to_detect(p: float, alpha: float = 0.05) -> int:
    """Smallest k with ``(1 − p)**k <= alpha``: runs to see damage with prob. >= 1 − alpha.

    The geometric waiting time of independent runs, from the closed form
    ``ceil(log(alpha) / log1p(-p))``, so the work is constant for any ``p``. ``p`` must
    be in (0, 1]; at p = 0 no number of runs suffices, which is an error, not infinity.
    """
    require_probability("p", p, one=True)
    require_probability("alpha", alpha)
    if p == 1.0:
        return 1
    # 1 − 0.95 is 0.050000000000000044 in binary floating point; a relative slack of
    # 1e-12 keeps decimal inputs on the side of the boundary they were written on.
    limit = alpha * (1.0 + 1e-12)
    estimate = math.log(limit) / math.log1p(-p)  # closed form; log1p keeps tiny p exact
    if not math.isfinite(estimate):
        raise InputError("p", f"= {p} is too small: no finite number of runs can be planned")
    k = max(1, math.ceil(estimate))
    # The logarithms land within one of the boundary; settle it with at most two steps
    # each way, so the work is bounded for every p (a tiny p is not a long loop).
    for _ in range(2):
        if k > 1 and _all_miss(p, k - 1) <= limit:
            k -= 1
    for _ in range(2):
        if _all_miss(p, k) > limit:
            k += 1
    return k


def _all_miss(p: float, k: int) -> float:
    """(1 − p)**k; through log1p when 1 − p would round away most of p's digits."""
    if p < 1e-6:
        return math.exp(k * math.log1p(-p))
    return (1.0 - p) ** k


@dataclass(frozen=True)
class CellPlan:
    """Conservative audit size for one damage-producing cell.

    Attributes:
        model: The model.
        task: The task.
        damage: Damage runs observed.
        n: Runs observed.
        p_low: Clopper-Pearson lower bound of the damage probability.
        runs: Runs needed at p_low to see damage with probability >= 1 − alpha.
    """

    model: str
    task: str
    damage: int
    n: int
    p_low: float
    runs: int


def plan_cells(
    tallies: Sequence[CellTally], alpha: float = 0.05, ci_alpha: float = 0.05
) -> list[CellPlan]:
    """Conservative runs per damage-producing cell, from the lower bound of its rate.

    Uses the lower end of the two-sided Clopper-Pearson (1 − ci_alpha) interval, so the
    plan holds unless the cell is rarer than the data allow at that confidence. Cells
    without damage are left out: their lower bound is 0 and no k suffices.
    """
    plans = []
    for t in tallies:
        if t.damage == 0:
            continue
        low, _ = clopper_pearson(t.damage, t.n, ci_alpha)
        plans.append(CellPlan(t.model, t.task, t.damage, t.n, low, runs_to_detect(low, alpha)))
    return plans


@dataclass(frozen=True)
class PopulationPlan:
    """Conservative audit size for one model's population of damage-producing cells.

    Built on the upper bounds of the population miss rate (`PopulationMiss.miss_upper`),
    not on the observed statistic, which is a lower bound: the plan holds unless the
    population is worse than the data allow.

    Attributes:
        model: The model.
        fit: The zero-inflated beta-binomial fit over the model's cells.
        runs: Fewest runs per cell whose k-run miss rate is at most 1 − detect (upper
            bound); None when not identified or no number up to 100,000 suffices.
        misses: (k, upper bound of the k-run miss rate) at each of `SHOWN_K`.
    """

    model: str
    fit: PopulationMiss
    runs: int | None
    misses: tuple[tuple[int, float], ...]

    def to_json(self) -> dict[str, object]:
        """One entry of `kaudit plan --json`'s ``population``."""
        return {
            "model": self.model,
            "runs": self.runs,
            "miss_upper": {str(k): value for k, value in self.misses},
            "fit": self.fit.to_json(),
        }


def population_plans(
    tallies: Sequence[CellTally], detect: float = 0.95, alpha: float = 0.05
) -> list[PopulationPlan]:
    """Per model, runs per cell to see a damage-producing cell with chance >= ``detect``.

    The population is the model's cells (every task it ran, damaging or not), fitted as
    a zero-inflated beta-binomial; the plan uses the upper end of the k-run miss rate's
    profile-likelihood bounds, at level ``alpha``.
    """
    plans = []
    for model, fit in model_populations(tallies, alpha).items():
        misses = tuple((k, fit.miss_upper(k)) for k in SHOWN_K)
        plans.append(PopulationPlan(model, fit, fit.runs_to_detect(detect), misses))
    return plans
