"""Repeated-run estimators: pass^k, safe^k and pass@k, per cell and over a pool."""

from __future__ import annotations

import math
from collections.abc import Sequence

from kaudit._require import require_at_least, require_tally

__all__ = [
    "choose_ratio",
    "pass_at_k",
    "pass_pow_k",
    "pool_mean",
    "safe_pow_k",
]


def choose_ratio(a: int, n: int, k: int) -> float:
    """``C(a, k) / C(n, k)`` as a float, exact in the sense of no big-integer overflow.

    This is the probability that k runs drawn without replacement from n all fall among
    a given a of them. Computed as the product ``Π (a − i)/(n − i)`` for i < k, which stays
    accurate for large n. Undefined (NaN) when ``k > n``: n runs cannot supply k distinct ones.
    """
    require_at_least("k", k, 0)
    require_tally(a, n, count_name="a")
    if k > n:
        return math.nan
    if k > a:
        return 0.0
    ratio = 1.0
    for i in range(k):
        ratio *= (a - i) / (n - i)
    return ratio


def safe_pow_k(n: int, x: int, k: int) -> float:
    """Unbiased estimate of safe^k, the chance that k independent runs all leave no damage.

    ``C(n − x, k) / C(n, k)`` from x damage runs of n: the pass^k construction of
    Yao et al. (2024, tau-bench) applied to the absence of damage. NaN when ``k > n``.
    """
    require_tally(x, n)
    return choose_ratio(n - x, n, k)


def pass_pow_k(n: int, s: int, k: int) -> float:
    """Unbiased estimate of pass^k, the chance that k independent runs all succeed.

    ``C(s, k) / C(n, k)`` from s successes of n (Yao et al. 2024, tau-bench).
    NaN when ``k > n``.
    """
    return choose_ratio(s, n, k)


def pass_at_k(n: int, s: int, k: int) -> float:
    """Unbiased estimate of pass@k, the chance that at least one of k runs succeeds.

    ``1 − C(n − s, k) / C(n, k)`` (Chen et al. 2021, Codex/HumanEval). NaN when ``k > n``.
    """
    require_tally(s, n, count_name="s")
    return 1.0 - choose_ratio(n - s, n, k)


def pool_mean(values: Sequence[float]) -> tuple[float, int]:
    """Mean over the cells where a per-cell estimate is defined, and how many those are.

    Cells with ``k > n`` (NaN) are left out rather than poisoning the pool; the count says
    how many cells the mean stands on. No defined cell gives ``(nan, 0)``.
    """
    defined = [v for v in values if not math.isnan(v)]
    if not defined:
        return (math.nan, 0)
    return (math.fsum(defined) / len(defined), len(defined))
