"""Exact and score intervals for binomial proportions, two-sided and one-sided."""

from __future__ import annotations

import math

from kaudit._blas import special as _sp
from kaudit._require import require_probability, require_tally

__all__ = [
    "clopper_pearson",
    "prevalence_upper",
    "wilson",
]


def _check(x: int, n: int, alpha: float) -> None:
    require_tally(x, n)
    require_probability("alpha", alpha)


def clopper_pearson(x: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact two-sided (1 − alpha) interval for a binomial proportion.

    Clopper & Pearson (1934): the bounds are beta quantiles,
    ``Beta(alpha/2; x, n−x+1)`` and ``Beta(1−alpha/2; x+1, n−x)``, with 0 and 1 at x = 0
    and x = n (computed with ``scipy.special.betaincinv``, the inverse that
    ``scipy.stats.beta.ppf`` evaluates). Coverage is at least 1 − alpha for every
    true p, which is why kaudit uses it for claims that must hold in review.
    ``n == 0`` has no information: ``(nan, nan)``.
    """
    _check(x, n, alpha)
    if n == 0:
        return (math.nan, math.nan)
    low = 0.0 if x == 0 else float(_sp.betaincinv(x, n - x + 1, alpha / 2))
    high = 1.0 if x == n else float(_sp.betaincinv(x + 1, n - x, 1 - alpha / 2))
    return (low, high)


def wilson(x: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson (1927) score interval: shorter than Clopper-Pearson, coverage only approximate.

    Offered as an option for comparison with papers that report it; ``n == 0`` gives
    ``(nan, nan)``.
    """
    _check(x, n, alpha)
    if n == 0:
        return (math.nan, math.nan)
    z = float(_sp.ndtri(1 - alpha / 2))
    p = x / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clip: rounding can push the bound a hair past p at x = 0 or x = n.
    return (max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p)))


def prevalence_upper(observed: int, total: int, alpha: float = 0.05) -> float:
    """Exact one-sided (1 − alpha) upper limit on a prevalence from ``observed`` of ``total``.

    The one-sided Clopper-Pearson bound ``Beta(1 − alpha; observed + 1, total − observed)``.
    With none observed it is the closed form ``1 − alpha**(1/total)`` (the "rule of three"
    of Hanley & Lippman-Hand 1983 is its approximation ``3/total`` at alpha = 0.05).
    kaudit uses it for the share of always-fail cells when no cell damages on every run.
    ``total == 0`` gives NaN.
    """
    _check(observed, total, alpha)
    if total == 0:
        return math.nan
    if observed == total:
        return 1.0
    if observed == 0:
        return float(1.0 - alpha ** (1.0 / total))
    return float(_sp.betaincinv(observed + 1, total - observed, 1 - alpha))
