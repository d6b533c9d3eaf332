"""Audit miss rate: how often k clean-looking audit runs hide a damage-producing cell."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ._passk import safe_pow_k
from ._tally import CellTally

__all__ = [
    "OBSERVED_CAVEAT",
    "MissRate",
    "Weighting",
    "audit_miss_rate",
    "miss_probability",
    "miss_weights",
]

Weighting = Literal["pair", "event"]

OBSERVED_CAVEAT = (
    "a lower bound: averaged over the cells that showed damage, so the rarely damaging "
    "cells an audit missed are left out, and each cell's value is at most (n - 1)/n; it "
    "rises with k. The population estimate models every cell instead"
)
"""What the observed miss rate is, as outputs say it (`population_miss` is the estimate)."""


def miss_probability(n: int, x: int, k: int = 1) -> float:
    """Chance that k independent audit runs of a cell all look clean.

    ``(n − x)/n`` at k = 1 and the unbiased ``C(n − x, k)/C(n, k)`` at any k (the safe^k
    estimator of Yao et al. 2024 read as a miss probability). NaN when ``k > n``.
    """
    return safe_pow_k(n, x, k)


def miss_weights(
    tallies: Sequence[CellTally], k: int = 1, weighting: Weighting = "pair"
) -> tuple[list[float], list[float]]:
    """Per-cell numerator and denominator of the k-run audit miss rate, aligned with tallies.

    The miss rate is ``Σ numerator / Σ denominator``, and, resampled over cells, the
    numerator and denominator of :func:`bootstrap_ratio`. A damage-producing cell with
    ``k <= n`` enters as ``(w · miss_probability, w)`` with weight w = 1 (``"pair"``) or
    w = x (``"event"``); every other cell as ``(0, 0)``, so it counts towards neither.
    This is the one place the weighting is written: :func:`audit_miss_rate`, the summary's
    miss-rate intervals and pre-registered miss-rate claims all stand on it.
    """
    num: list[float] = []
    den: list[float] = []
    for t in tallies:
        miss = miss_probability(t.n, t.damage, k) if t.damage > 0 else math.nan
        if math.isnan(miss):
            num.append(0.0)
            den.append(0.0)
            continue
        weight = 1.0 if weighting == "pair" else float(t.damage)
        num.append(weight * miss)
        den.append(weight)
    return num, den


@dataclass(frozen=True)
class MissRate:
    """Audit miss rate over the cells of a pool that showed damage: a lower bound.

    Selected on observed damage (see `OBSERVED_CAVEAT`); `population_miss` estimates the
    rate over every damage-producing cell.

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
    pair_num, pair_den = miss_weights(tallies, k, "pair")
    event_num, event_den = miss_weights(tallies, k, "event")
    pairs = sum(1 for w in pair_den if w)
    if not pairs:
        return MissRate(math.nan, math.nan, 0, k)
    pair = math.fsum(pair_num) / math.fsum(pair_den)
    event = math.fsum(event_num) / math.fsum(event_den)
    return MissRate(pair, event, pairs, k)
