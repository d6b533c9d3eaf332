"""The mirage test: is a cell's deployment harm rate above its audited rate? Checked every event.

The question is about the difference of two rates, one from a finished audit (a fixed
sample, or a sequentially stopped one) and one from a deployment stream looked at after
every event. Bounding each rate on its own and comparing the bounds spends the error
rate twice and adds the two margins; with a 60-run audit the audit's margin alone hides a
doubled rate. This test uses the audit's exact p-value and the deployment's anytime-valid
one together, for every possible common rate ``p``:

- audit: ``P_a(p) = P(Binomial(n_a, p) <= x_a)``, exact, for "the audited rate is at
  least p" (a stopped audit uses its anytime-valid p-value, `log_evidence_below`);
- deployment: ``P_d(p) = 1 / max_{m <= n} M_m(p)``, with ``M(p)`` a mixture of likelihood
  ratios of rates above p (``ALTERNATIVES``) against p: a test supermartingale under any
  deployment rate at most p, so ``P_d`` is a p-value at every look (Ville 1939);
- combination: the cell is a mirage when, for every p, ``P_a(p) <= φ(P_d(p))`` with
  ``φ(v) = min(1, c·v^(−θ))``. For independent p-values the chance of that at the true
  audited rate is at most ``E[φ⁻¹(P_a)]``; ``c`` is the largest level keeping this at
  most the cell's alpha for every audited rate, computed from the binomial itself
  (``calibrated_level``), so the audit's discreteness is spent rather than wasted.

Under the null (deployment rate at most the audited rate), a mirage ever being raised,
at any event, has probability at most the cell's alpha. p runs over a grid; on each
interval the audit p-value is taken at its lower end and the deployment's at its upper
end, so the grid only makes the test more conservative. The combination of independent
p-values by a decreasing rejection curve is Fisher's (1932) idea in its general form;
the anytime p-value is Robbins' (1970) mixture with Ville's inequality.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit._require import require_at_least, require_probability, require_tally
from kaudit.stats import anytime_upper, log_evidence_below

__all__ = ["ALTERNATIVES", "MIRAGE_TEST", "THETA", "MirageTest", "calibrated_level"]

FloatArray = npt.NDArray[np.float64]

THETA = 0.5
"""The combination's exponent: ``φ(v) = min(1, c / sqrt(v))``."""
ALTERNATIVES = ((1.2, 0.4), (1.4, 0.4), (2.0, 0.1), (5.0, 0.1))
"""(ratio, weight) of the deployment mixture: against a null rate p, the rates ratio × p.

Most weight close to the null, where the audit leaves the decision to the deployment;
some on large ratios, so a deployment far above a low null rate is seen with few harms.
Chosen once, by simulation of one configuration (24 cells, 60-run audits at 0.1), and
measured on another (300-run audits) in `bench/monitor_power.py`."""
NULLS = 200
"""Grid intervals between 0 and the highest rate the audit leaves plausible at level c."""
CALIBRATE_UP_TO = 300
"""Audits with more runs use the level every p-value allows, ``(1 − θ)·alpha``."""
MIRAGE_TEST = (
    "audit exact p-value combined with the deployment's anytime-valid p-value over every "
    "common rate (phi(v) = min(1, c/sqrt(v))); a mirage is ever raised under no drift with "
    "probability <= the cell's alpha"
)
"""The test's name as outputs print it."""

_LOGIT_EDGE, _LOGIT_FINE = 25.0, 12.0


@dataclass(frozen=True)
class MirageTest:
    """The test for one audit cell at one level: per null rate, the evidence it needs.

    Attributes:
        nulls: The deployment's null rates ``p_1 < … < p_G`` (grid interval upper ends).
        needed: Per null, the log evidence (running max of ``log M``) the deployment must
            reach there: ``max(0, (log P_a(p_(i−1)) − log c) / θ)``.
        level: ``c``, the combination's level.
        possible: False when the audit allows every rate below 1 at level c (an audit
            that damaged on every run): no deployment can be a mirage.
    """

    nulls: FloatArray
    needed: FloatArray
    level: float
    possible: bool

    @classmethod
    def for_audit(cls, damage: int, n: int, alpha: float, anytime: bool = False) -> MirageTest:
        """The test against an audit of ``damage`` in ``n`` runs, at the cell's ``alpha``.

        ``anytime``: the audit was stopped by a rule that looked at its runs, so its
        p-value is the anytime-valid one and the level is the uncalibrated
        ``(1 − θ)·alpha``, which holds for any p-value.
        """
        require_at_least("n", n, 1)
        require_tally(damage, n, count_name="damage")
        require_probability("alpha", alpha)
        level = (1 - THETA) * alpha if anytime else calibrated_level(n, alpha)
        top = anytime_upper(damage, n, level) if anytime else _exact_upper(damage, n, level)
        if top >= 1.0:
            return cls(np.ones(1), np.full(1, math.inf), level, False)
        edges = np.linspace(0.0, top, NULLS + 1)
        audit = audit_p_values(damage, n, edges[:-1], anytime)
        with np.errstate(divide="ignore"):
            needed = np.maximum(0.0, (np.log(audit) - math.log(level)) / THETA)
        return cls(edges[1:], needed, level, True)

    def log_evidence(self, harm: npt.ArrayLike, events: npt.ArrayLike) -> FloatArray:
        """``log M`` at every null after ``harm`` harms in ``events``; shape (..., G)."""
        x = np.asarray(harm, dtype=np.float64)[..., None]
        n = np.asarray(events, dtype=np.float64)[..., None]
        return _log_mixture(x, n, self.nulls)

    def rejects(self, best: FloatArray) -> bool:
        """Whether the running maxima of ``log M`` (per null) make the cell a mirage."""
        return self.possible and bool(np.all(best >= self.needed))


def _log_mixture(x: FloatArray, n: FloatArray, nulls: FloatArray) -> FloatArray:
    """Log Σ_j w_j L(q_j)/L(p) with q_j = min(r_j·p, (1 + p)/2), for every null p."""
    terms = []
    for ratio, weight in ALTERNATIVES:
        q = np.minimum(ratio * nulls, (1.0 + nulls) / 2.0)
        up = np.log(q) - np.log(nulls)
        down = np.log1p(-q) - np.log1p(-nulls)
        terms.append(math.log(weight) + x * up + (n - x) * down)
    return np.asarray(np.logaddexp.reduce(np.stack(terms), axis=0), dtype=np.float64)


def audit_p_values(damage: int, n: int, rates: FloatArray, anytime: bool) -> FloatArray:
    """The audit's p-value for "its rate is at least p", at each rate p.

    Fixed-k: ``P(Binomial(n, p) <= damage)`` (``scipy.special.bdtr``), exact. Stopped:
    ``min(1, 1/E)`` with E the one-sided anytime evidence (`log_evidence_below`), valid at
    the data-dependent n the audit stopped at.
    """
    if anytime:
        evidence = np.array([log_evidence_below(damage, n, float(p)) for p in rates])
        return np.asarray(np.minimum(1.0, np.exp(-evidence)), dtype=np.float64)
    return np.asarray(_sp.bdtr(damage, n, rates), dtype=np.float64)


def _exact_upper(damage: int, n: int, level: float) -> float:
    """The rate p where ``P(Binomial(n, p) <= damage) = level`` (Clopper-Pearson's end)."""
    if damage >= n:
        return 1.0
    return float(_sp.betaincinv(damage + 1, n - damage, 1.0 - level))


@functools.lru_cache(maxsize=256)
def calibrated_level(n: int, alpha: float) -> float:
    """The largest c with ``sup_p E_p[φ⁻¹(P_a)] <= alpha`` for an audit of n fixed runs.

    ``φ⁻¹(u) = min(1, (c/u)^(1/θ))`` is the deployment p-value a mirage needs when the
    audit's is u, so the error at audited rate p is at most ``E_p[φ⁻¹(F_p(X))]``, X
    binomial and F_p its distribution function. On a grid ``p_0 = 0 < … < p_J = 1`` (2,000
    points, uniform in logit), each interval's error is at most
    ``Σ_x P_(p_j)(X = x)·φ⁻¹(F_(p_(j+1))(x))``, since F_p falls with p and a falling
    function of X has a falling mean as p rises; c is the root of the largest of these
    bounds, so the guarantee holds at every p, not just the grid's. The grid moves X's
    mean by at most 0.02 standard deviations per step where it matters (logits within
    ±12), coarser in the far tails. Larger audits use ``(1 − θ)·alpha``, the level that
    holds for any p-value.
    """
    generic = (1 - THETA) * alpha
    if n > CALIBRATE_UP_TO:
        return generic
    fine = int(2 * _LOGIT_FINE * math.sqrt(n) / 0.04) + 1
    logits = np.concatenate([
        np.linspace(-_LOGIT_EDGE, -_LOGIT_FINE, 60, endpoint=False),
        np.linspace(-_LOGIT_FINE, _LOGIT_FINE, fine),
        np.linspace(_LOGIT_FINE, _LOGIT_EDGE, 61)[1:],
    ])  # fmt: skip
    grid = np.concatenate([[0.0], 1.0 / (1.0 + np.exp(-logits)), [1.0]])
    x = np.arange(n + 1, dtype=np.float64)
    low, high = grid[:-1, None], grid[1:, None]
    log_choose = _sp.gammaln(n + 1) - _sp.gammaln(x + 1) - _sp.gammaln(n - x + 1)
    pmf = np.exp(log_choose + _sp.xlogy(x, low) + _sp.xlog1py(n - x, -low))
    cdf = np.asarray(_sp.bdtr(x, n, high), dtype=np.float64)

    def error(c: float) -> float:
        with np.errstate(divide="ignore", over="ignore"):
            needed = np.minimum(1.0, (c / cdf) ** (1.0 / THETA))
        return float(np.max(np.sum(pmf * needed, axis=1)))

    if error(generic) > alpha:  # the grid's slack; the generic level holds regardless
        return generic
    from scipy.optimize import brentq

    c = float(brentq(lambda c: error(c) - alpha, generic, 1.0, rtol=1e-7))
    while error(c) > alpha:  # the root may sit a rounding step above the level
        c *= 1 - 1e-9
    return c
