"""An independent reference for `kaudit.stats.anytime_upper`: the mixture by quadrature.

The library evaluates the truncated-prior mixture in closed form (regularized incomplete
beta functions); this evaluates the same integral numerically with `scipy.integrate.quad`
straight from its definition, so a wrong closed form, prior or truncation shows up as a
disagreement. The substitution q = B·t² removes the Jeffreys prior's singularity at 0.
"""

from __future__ import annotations

import math

from scipy.integrate import quad
from scipy.optimize import brentq


def quadrature_log_evidence(x: int, n: int, limit: float) -> float:
    """log ∫_0^B (q/B)^x ((1−q)/(1−B))^(n−x) π(q) dq / Π(B), π Jeffreys, B = limit."""

    shift = -(n - x) * math.log1p(-limit)  # the ratio's largest possible log, factored out

    def integrand(t: float) -> float:
        q = limit * t * t
        log_ratio = 2 * x * math.log(t) if x and t else 0.0
        log_ratio += (n - x) * (math.log1p(-q) - math.log1p(-limit)) - shift
        if x and not t:
            return 0.0
        return math.exp(log_ratio) * (1 - q) ** -0.5 * 2 * math.sqrt(limit)

    value, _ = quad(integrand, 0.0, 1.0, epsabs=0.0, epsrel=1e-12, limit=200)
    prior = 2 * math.asin(math.sqrt(limit))  # ∫_0^B q^(-1/2) (1-q)^(-1/2) dq
    return shift + math.log(value / prior) if value > 0 else -math.inf


def quadrature_upper(x: int, n: int, alpha: float) -> float:
    """The smallest limit above x/n where the quadrature evidence reaches 1/alpha."""
    target = math.log(1 / alpha)
    high = 1 - 1e-9
    if x == n or quadrature_log_evidence(x, n, high) < target:
        return 1.0
    low = max(x / n, 1e-12)
    return float(brentq(lambda b: quadrature_log_evidence(x, n, b) - target, low, high, xtol=1e-12))
