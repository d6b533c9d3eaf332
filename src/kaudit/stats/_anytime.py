"""A one-sided anytime-valid upper bound on a Bernoulli rate, for decisions asked again and again.

A gate that denies a cell can be asked again after more runs, and again. A fixed-n bound
(Clopper-Pearson) holds its level at one look only; asked after every extension, it
grants a cell above the bound far more often than it says. The bound here holds at every
number of runs at once, so no sequence of looks, extensions or stopping rules raises the
chance that it ever lies below the true rate above ``alpha``.

It is one-sided on purpose: a gate only ever asks "is the rate shown below the limit?",
and spending all of ``alpha`` on that side needs fewer runs than reading one end of the
two-sided confidence sequence (`beta_binomial_cs`): 29 clean runs show a rate below 0.15
at one-sided 2.5%, where the two-sided sequence at 5% needs 33 and at 2.5% needs 38.
"""

from __future__ import annotations

import functools
import math

from kaudit._blas import special as _sp
from kaudit._require import require_probability, require_tally

__all__ = ["ANYTIME_UPPER_METHOD", "anytime_upper", "log_evidence_below", "shown_below"]

ANYTIME_UPPER_METHOD = (
    "one-sided beta-binomial mixture bound (Robbins 1970; Jeffreys prior truncated below "
    "the bound), valid at every number of runs"
)
"""The name outputs print for bounds from `anytime_upper`."""

_A = _B = 0.5  # Jeffreys prior
_EDGE = 1e-15


def _check(x: int, n: int, alpha: float) -> None:
    require_tally(x, n)
    require_probability("alpha", alpha)


def log_evidence_below(x: int, n: int, limit: float) -> float:
    """The log of the mixture martingale against "rate >= limit" after x events in n trials.

    ``M_n(B) = ∫_0^B L(q) π(q) dq / (Π(B) · L(B))`` with L the Bernoulli likelihood and π
    the Jeffreys prior truncated to ``[0, B)`` (closed form: regularized incomplete beta
    functions). Each ``L(q)/L(B)`` with ``q < B`` is a nonnegative supermartingale with
    mean at most 1 under every rate ``p >= B`` (one run multiplies it by
    ``p·q/B + (1−p)(1−q)/(1−B) <= 1``), so the mixture is one too, and by Ville's
    inequality it ever reaches ``1/alpha`` with probability at most alpha, whatever the
    number of runs it is looked at (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021).
    ``limit`` at 0 gives -inf, at 1 +inf (nothing exceeds a rate of 1).
    """
    _check(x, n, 0.5)
    if limit <= 0.0:
        return -math.inf
    if limit >= 1.0:
        return math.inf
    return _log_evidence(x, n, float(limit))


def _log_evidence(x: int, n: int, limit: float) -> float:
    mass = float(_sp.betainc(_A + x, _B + n - x, limit))
    if mass <= 0.0:  # every likely rate is above the limit: no evidence below it
        return -math.inf
    mixture = float(_sp.betaln(_A + x, _B + n - x)) + math.log(mass)
    prior = float(_sp.betaln(_A, _B)) + math.log(float(_sp.betainc(_A, _B, limit)))
    likelihood = (x * math.log(limit) if x else 0.0) + (
        (n - x) * math.log1p(-limit) if n - x else 0.0
    )
    return mixture - prior - likelihood


def shown_below(x: int, n: int, limit: float, alpha: float) -> bool:
    """Whether x events in n trials show the rate below ``limit`` at anytime level alpha.

    True when the mixture martingale (`log_evidence_below`) has reached ``1/alpha``. If
    the true rate is at or above the limit, the chance that this is ever true, over any
    number of looks at any numbers of trials, is at most alpha. The gate grants on it.
    """
    _check(x, n, alpha)
    return log_evidence_below(x, n, limit) >= math.log(1.0 / alpha)


def anytime_upper(x: int, n: int, alpha: float = 0.025) -> float:
    """The one-sided (1 − alpha) anytime-valid upper bound on a rate after x events in n.

    The smallest limit the data show the rate below (`shown_below`): the root of
    ``log M_n(B) = log(1/alpha)`` above x/n, by Brent's method (``M_n`` rises with B
    there). The chance that the bound is ever below the true rate, at any n, is at most
    alpha. ``n == 0`` (or no limit below 1 shown): 1.0.
    """
    _check(x, n, alpha)
    return _upper(x, n, alpha)


@functools.lru_cache(maxsize=1 << 16)
def _upper(x: int, n: int, alpha: float) -> float:
    """Memoised: a simulation or a report asks for the same (x, n) many times."""
    if n == 0 or x == n:
        return 1.0
    target = math.log(1.0 / alpha)
    high = 1.0 - _EDGE
    if _log_evidence(x, n, high) < target:
        return 1.0
    low = max(x / n, _EDGE)
    if _log_evidence(x, n, low) >= target:  # cannot happen at p̂ (M <= 1 there), kept safe
        return low
    from scipy.optimize import brentq

    return float(brentq(lambda b: _log_evidence(x, n, b) - target, low, high, xtol=1e-14))
