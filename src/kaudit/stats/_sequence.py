"""Anytime-valid (time-uniform) bounds for a Bernoulli rate, and its partial identification.

A fixed-n interval such as Clopper-Pearson covers the true rate with probability
1 − alpha only if n was chosen before looking. A stream checked after every event, or an
audit stopped once a bound crosses a target, needs a *confidence sequence*: intervals
that hold at every n simultaneously, so any data-dependent stopping time is covered.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kaudit._blas import special as _sp
from kaudit._require import require_probability, require_tally

__all__ = [
    "CS_METHOD",
    "IdentifiedRange",
    "beta_binomial_cs",
    "confidence_sequence",
    "identified_range",
]

CS_METHOD = "beta-binomial mixture confidence sequence (Robbins 1970, Jeffreys prior)"
"""The name outputs print for intervals from `beta_binomial_cs`."""

_JEFFREYS = (0.5, 0.5)
_EDGE = 1e-15  # open-interval bracket ends for the root finder


def _check(x: int, n: int, alpha: float) -> None:
    require_tally(x, n)
    require_probability("alpha", alpha)


def _log_likelihood(p: float, x: int, n: int) -> float:
    """Binomial log-likelihood of p without the binomial coefficient (it cancels)."""
    return (x * math.log(p) if x else 0.0) + ((n - x) * math.log1p(-p) if n - x else 0.0)


def beta_binomial_cs(
    x: int, n: int, alpha: float = 0.05, prior: tuple[float, float] = _JEFFREYS
) -> tuple[float, float]:
    """The (1 − alpha) confidence sequence for a Bernoulli rate after x events in n trials.

    Robbins (1970), "Statistical methods related to the law of the iterated logarithm":
    under the rate p the beta-binomial mixture ``M_n(p) = B(a+x, b+n−x) / B(a, b) /
    (p^x (1−p)^(n−x))`` is a nonnegative martingale with mean 1, so by Ville's inequality
    ``P(sup_n M_n(p) ≥ 1/alpha) ≤ alpha``. The set ``{p : M_n(p) < 1/alpha}`` therefore
    covers p at every n at once, and at any stopping time. ``log M_n`` is convex in p and
    at most 0 at p̂ = x/n, so the set is an interval containing p̂; its ends are found by
    Brent's root finding. Always at least as wide as Clopper-Pearson at the same n (the
    price of looking after every event). ``n == 0``: ``(0.0, 1.0)``, nothing is known.
    """
    _check(x, n, alpha)
    return _cs(x, n, alpha, prior)


def _brentq() -> Any:
    """scipy.optimize's root finder, imported on first use (~0.1 s, fixed-k reports skip it)."""
    from scipy.optimize import brentq

    return brentq


@functools.lru_cache(maxsize=1 << 16)
def _cs(x: int, n: int, alpha: float, prior: tuple[float, float]) -> tuple[float, float]:
    """Memoised: a monitor or a stopping rule asks for the same (x, n) again and again."""
    a, b = prior
    if n == 0:
        return (0.0, 1.0)
    # log M_n(p) - log(1/alpha), with the mixture constant computed once
    offset = float(_sp.betaln(a + x, b + n - x) - _sp.betaln(a, b)) - math.log(1.0 / alpha)

    def excess(p: float) -> float:
        return offset - _log_likelihood(p, x, n)

    phat = x / n
    low = 0.0
    if x > 0 and excess(_EDGE) > 0:
        low = float(_brentq()(excess, _EDGE, min(phat, 1 - _EDGE), xtol=1e-14))
    high = 1.0
    if x < n and excess(1 - _EDGE) > 0:
        high = float(_brentq()(excess, max(phat, _EDGE), 1 - _EDGE, xtol=1e-14))
    return (low, high)


def confidence_sequence(outcomes: Iterable[bool], alpha: float = 0.05) -> list[tuple[float, float]]:
    """The running intersection of `beta_binomial_cs` after each outcome of a stream.

    Intersecting a confidence sequence with its own past keeps it valid (every member
    covers p on the same event of probability ≥ 1 − alpha) and makes it nested: each
    interval lies inside the one before. The i-th entry is the interval after i+1 outcomes.
    """
    low, high = 0.0, 1.0
    x = 0
    found: list[tuple[float, float]] = []
    for n, outcome in enumerate(outcomes, start=1):
        x += bool(outcome)
        cs_low, cs_high = beta_binomial_cs(x, n, alpha)
        low, high = max(low, cs_low), min(high, cs_high)
        found.append((low, high))
    return found


@dataclass(frozen=True)
class IdentifiedRange:
    """What n events with some unobserved outcomes say about the harm rate.

    Attributes:
        n: Events seen, observed or not.
        harm: Events observed to cause harm.
        unobserved: Events whose outcome was not observed.
        lower: harm / n, the rate if no unobserved event was a harm.
        upper: (harm + unobserved) / n, the rate if every unobserved event was one.
        ci_low: Anytime-valid lower bound of the lower series.
        ci_high: Anytime-valid upper bound of the upper series.
        method: The interval method, as outputs name it.
    """

    n: int
    harm: int
    unobserved: int
    lower: float
    upper: float
    ci_low: float
    ci_high: float
    method: str = CS_METHOD


def identified_range(harm: int, unobserved: int, n: int, alpha: float = 0.05) -> IdentifiedRange:
    """Partial identification of a harm rate when some outcomes are unobserved.

    Manski (1989), "Anatomy of the selection problem": without assumptions on why an
    outcome is missing, the rate is only known to lie in ``[harm/n, (harm+unobserved)/n]``.
    The true harm count X lies between harm and harm + unobserved, and the confidence
    sequence's bounds rise with x, so on the one event where the sequence for X covers p,
    ``ci_low(harm) ≤ p ≤ ci_high(harm + unobserved)`` at every n: one alpha, not two.
    ``n == 0`` gives NaN points and the trivial ``[0, 1]`` bounds.
    """
    require_tally(harm, n, count_name="harm")
    require_tally(unobserved, n - harm, count_name="unobserved", n_name="n - harm")
    ci_low = beta_binomial_cs(harm, n, alpha)[0]
    ci_high = beta_binomial_cs(harm + unobserved, n, alpha)[1]
    lower = harm / n if n else math.nan
    upper = (harm + unobserved) / n if n else math.nan
    return IdentifiedRange(n, harm, unobserved, lower, upper, ci_low, ci_high)
