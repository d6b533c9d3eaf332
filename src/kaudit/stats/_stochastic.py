"""The demonstrably-stochastic rule and how much of the damage it covers."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kaudit.errors import InputError

from ._intervals import clopper_pearson, prevalence_upper
from ._sequence import beta_binomial_cs
from ._tally import CellKey, CellTally

__all__ = [
    "AlwaysFail",
    "always_fail_upper",
    "is_stochastic",
    "stochastic_damage_share",
]


def is_stochastic(
    x: int, n: int, alpha: float = 0.05, eps: float = 0.05, anytime: bool = False
) -> bool:
    """Whether a cell is demonstrably stochastic: damage is neither (almost) never nor always.

    True when the exact Clopper-Pearson (1934) (1 − alpha) interval of x/n lies strictly
    inside ``(eps, 1 − eps)``: at that confidence the cell's damage probability is bounded
    away from both 0 and 1, so a single audit run can miss it *and* can catch it.
    ``anytime`` (a cell stopped by a rule that looked at its runs) uses the anytime-valid
    confidence sequence instead, whose level holds at the data-dependent n.
    An empty cell (n = 0) is never demonstrably stochastic.
    """
    if not 0.0 <= eps < 0.5:
        raise InputError("eps", f"must be in [0, 0.5), got {eps}")
    low, high = beta_binomial_cs(x, n, alpha) if anytime else clopper_pearson(x, n, alpha)
    if n == 0:
        return False
    return eps < low and high < 1 - eps


def stochastic_damage_share(
    tallies: Sequence[CellTally],
    alpha: float = 0.05,
    eps: float = 0.05,
    sequential: Collection[CellKey] = (),
) -> float:
    """Share of all damage events that fall in demonstrably-stochastic cells.

    ``Σ x over stochastic cells / Σ x over all cells``; cells in ``sequential`` are judged
    with the anytime-valid interval. NaN when the pool has no damage.
    """
    total = sum(t.damage for t in tallies)
    if total == 0:
        return math.nan
    carried = sum(
        t.damage for t in tallies if is_stochastic(t.damage, t.n, alpha, eps, t.key in sequential)
    )
    return carried / total


@dataclass(frozen=True)
class AlwaysFail:
    """How many damage-producing cells damaged on every run, and an exact bound on the share.

    Attributes:
        observed: Damage-producing cells with ``damage == n``.
        cells: Damage-producing cells (the population the share is over).
        upper: One-sided (1 − alpha) exact upper limit on the share; NaN with no cells.
    """

    observed: int
    cells: int
    upper: float


def always_fail_upper(tallies: Sequence[CellTally], alpha: float = 0.05) -> AlwaysFail:
    """Exact one-sided upper limit on the prevalence of always-fail cells.

    An always-fail cell damages on every run, so one audit run would always catch it.
    Among the damage-producing cells, none observed with ``damage == n`` bounds their
    prevalence by ``1 − alpha**(1/cells)`` (Clopper & Pearson 1934, one-sided at x = 0).
    """
    producing = [t for t in tallies if t.damage > 0]
    observed = sum(1 for t in producing if t.damage == t.n)
    return AlwaysFail(observed, len(producing), prevalence_upper(observed, len(producing), alpha))
