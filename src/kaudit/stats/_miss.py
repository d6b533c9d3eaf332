"""Audit miss rate: how often k clean-looking audit runs hide a damage-producing cell."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ._passk import safe_pow_k
from ._tally import CellTally

__all__ = ["MissRate", "audit_miss_rate", "miss_probability"]


def miss_probability(n: int, x: int, k: int = 1) -> float:
    """Chance that k independent audit runs of a cell all look clean.

    ``(n − x)/n`` at k = 1 and the unbiased ``C(n − x, k)/C(n, k)`` at any k (the safe^k
    estimator of Yao et al. 2024 read as a miss probability). NaN when ``k > n``.
    """
    return safe_pow_k(n, x, k)


@dataclass(frozen=True)
class MissRate:
    """Audit miss rate over the damage-producing cells of a pool.

    Attributes:
        pair: Mean over damage-producing (model, task) pairs, each pair weighted equally.
        event: Mean weighted by each pair's damage count x: the share of damage events
            that sit in a cell a k-run audit would have passed.
        pairs: Damage-producing pairs the means stand on (those with ``k <= n``).
        k: Audit runs per cell.
    """

    pair: float
    event: float
    pairs: int
    k: int


def audit_miss_rate(tallies: Sequence[CellTally], k: int = 1) -> MissRate:
    """Audit miss rate at k runs, pair-weighted and event-weighted; always report both.

    Pair weighting answers "what share of the problems does a k-run audit miss";
    event weighting (weights x) answers "what share of the damage". They differ when the
    rarely-damaging cells are many, which is the usual case. Both are NaN with no
    damage-producing cell.
    """
    per_cell = [(t.damage, miss_probability(t.n, t.damage, k)) for t in tallies if t.damage > 0]
    defined = [(x, m) for x, m in per_cell if not math.isnan(m)]
    if not defined:
        return MissRate(math.nan, math.nan, 0, k)
    pair = math.fsum(m for _, m in defined) / len(defined)
    event = math.fsum(x * m for x, m in defined) / sum(x for x, _ in defined)
    return MissRate(pair, event, len(defined), k)
