"""Beta-binomial overdispersion: how much damage clusters by cell beyond binomial noise.

Three estimates of the intra-class correlation rho (ICC) of damage within a cell, which
agree when cells are equal in size and differ when they are not:

- the moment identity ``Var(p̂) = mu(1 − mu)/n · (1 + (n − 1)·rho)`` of equal cells with
  the mean cell size n̄ put in for n (`fit_moments`): AgentRelBench's estimator, kept to
  compare with the numbers it publishes; it is not Williams' (1975) estimator, which is
  maximum likelihood, nor Kleinman's (1973) weighted moments;
- the one-way ANOVA estimator with the unequal-n size n₀ (`anova_icc`; Fleiss, Levin &
  Paik 2003, section 15; Ridout, Demétrio & Firth 1999, estimator "A");
- maximum likelihood over cells with unequal n, with a likelihood-ratio test of
  rho = 0 and a profile-likelihood interval for rho.

When the pool has no damage at all, or damage on every run, the mean sits on the edge
of [0, 1] and rho is not identified: every rho gives the same likelihood. Both fits then
return ``None`` for rho and its companions rather than whatever value an optimizer
stopped at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit._require import require_probability
from kaudit.errors import InputError

__all__ = ["ANOVA_ESTIMATOR", "MOMENTS_ESTIMATOR", "MleFit", "MomentsFit", "anova_icc",
           "fit_mle", "fit_moments"]  # fmt: skip

MOMENTS_ESTIMATOR = "moment identity of equal cells with the mean cell size n̄ (AgentRelBench)"
"""What `fit_moments` computes, as outputs name it."""
ANOVA_ESTIMATOR = "one-way ANOVA with unequal-n size n0 (Fleiss 1981; Ridout et al. 1999)"
"""What `anova_icc` computes, as outputs name it."""

FloatArray = npt.NDArray[np.float64]

# The likelihood is finite at rho = 1 only when every cell is all-or-nothing; stop short
# of it elsewhere so the logarithms stay finite.
_RHO_MAX = 1.0 - 1e-9
_MU_EDGE = 1e-12
# AgentRelBench evaluates its moment fit's likelihood with rho held at or below this.
_RHO_PUBLISHED = 0.999


def _optimize() -> Any:
    """scipy.optimize, imported on first use: it costs ~0.3 s and only the MLE needs it."""
    from scipy import optimize

    return optimize


@dataclass(frozen=True)
class MomentsFit:
    """Moment beta-binomial fit about the pooled rate, n̄ plugged into the equal-n identity.

    Attributes:
        icc: rho floored at 0 and capped at 1; ``None`` when not identified.
        icc_raw: rho before flooring and capping (negative means underdispersion).
        alpha: Beta prior alpha ``mean·(1/rho − 1)`` with rho held at 0.999 at most, as
            AgentRelBench holds it (above that the prior is a two-spike limit whose
            parameters only rounding separates from 0); ``None`` when rho is 0, >= 1 or
            undefined.
        beta: Beta prior beta ``(1 − mean)·(1/rho − 1)``, rho held likewise; ``None``
            likewise.
        overdispersion_p: Pearson chi-square homogeneity test p-value over cells
            (Cochran 1954), large-sample; ``None`` when not identified.
        lr_p: Likelihood ratio of the beta-binomial at the moment estimates against the
            binomial at the pooled rate, referred to χ²₁ (the p-value AgentRelBench
            publishes; rho is held below 0.999 for it); 1.0 when rho is floored at 0,
            ``None`` when not identified.
        mean: Pooled damage rate ``Σx / Σn``.
        cells: Cells used (those with n >= 1).
    """

    icc: float | None
    icc_raw: float | None
    alpha: float | None
    beta: float | None
    overdispersion_p: float | None
    lr_p: float | None
    mean: float
    cells: int


@dataclass(frozen=True)
class MleFit:
    """Maximum-likelihood beta-binomial fit (Skellam 1948; Griffiths 1973 parameterisation).

    Attributes:
        icc: Maximum-likelihood rho in [0, 1]; ``None`` when not identified.
        icc_ci: Profile-likelihood (1 − alpha) interval for rho; ``None`` when not identified.
        alpha: Beta alpha; ``None`` when rho is 0 (binomial) or 1 (all-or-nothing) or undefined.
        beta: Beta beta; ``None`` likewise.
        lr_p: Likelihood-ratio p-value for rho = 0, with the boundary mixture
            ½χ²₀ + ½χ²₁ (Self & Liang 1987); ``None`` when not identified.
        mean: Maximum-likelihood mean damage probability mu.
        loglik: Maximised log-likelihood (binomial coefficients included); NaN if undefined.
        cells: Cells used (those with n >= 1).
    """

    icc: float | None
    icc_ci: tuple[float, float] | None
    alpha: float | None
    beta: float | None
    lr_p: float | None
    mean: float
    loglik: float
    cells: int


def _arrays(x: Sequence[int], n: Sequence[int]) -> tuple[FloatArray, FloatArray]:
    xa = np.asarray(x, dtype=np.float64)
    na = np.asarray(n, dtype=np.float64)
    if xa.shape != na.shape or xa.ndim != 1:
        raise InputError("x", "and `n` must be sequences of the same length")
    if np.any(na < 0) or np.any(xa < 0) or np.any(xa > na):
        raise InputError("x", "must be in [0, `n`] in every cell")
    keep = na > 0
    return xa[keep], na[keep]


def _prior(mean: float, rho: float | None) -> tuple[float | None, float | None]:
    if rho is None or not 0.0 < rho < 1.0:
        return (None, None)
    scale = 1.0 / rho - 1.0
    return (mean * scale, (1.0 - mean) * scale)


def fit_moments(x: Sequence[int], n: Sequence[int]) -> MomentsFit:
    """Fit rho by the method of moments from the spread of p̂ about the pooled rate.

    ``rho = (s²·n̄ / (p̄(1 − p̄)) − 1) / (n̄ − 1)`` with p̄ = Σx/Σn the pooled rate,
    s² = Σ(p̂ − p̄)² / (cells − 1) and n̄ the mean cell size: the equal-n moment identity
    with n̄ put in for n, which is AgentRelBench's published estimator on any pool. With
    unequal cells it is neither the ANOVA estimator (`anova_icc`) nor the MLE.
    Reported floored at 0 and capped at 1, raw value kept. Undefined (``None``) with
    fewer than two cells, n̄ <= 1, or p̄ at 0 or 1.
    """
    xa, na = _arrays(x, n)
    cells = int(xa.size)
    mean = float(xa.sum() / na.sum()) if cells else math.nan
    nbar = float(np.mean(na)) if cells else math.nan
    if cells < 2 or not 0.0 < mean < 1.0 or nbar <= 1.0:
        return MomentsFit(None, None, None, None, None, None, mean, cells)
    s2 = float(np.sum((xa / na - mean) ** 2)) / (cells - 1)
    raw = (s2 * nbar / (mean * (1.0 - mean)) - 1.0) / (nbar - 1.0)
    icc = min(1.0, max(0.0, raw))
    chi2 = float(np.sum((xa - na * mean) ** 2 / (na * mean * (1.0 - mean))))
    p_value = float(_sp.chdtrc(cells - 1, chi2))
    alpha, beta = _prior(mean, icc if icc is None or icc >= 1.0 else min(icc, _RHO_PUBLISHED))
    return MomentsFit(icc, raw, alpha, beta, p_value, _moments_lr_p(xa, na, mean, raw), mean, cells)


def anova_icc(x: Sequence[int], n: Sequence[int]) -> float | None:
    """One-way ANOVA estimate of rho for binary data over cells of unequal size.

    ``(MSB − MSW) / (MSB + (n₀ − 1)·MSW)`` with ``MSB = Σ nᵢ(p̂ᵢ − p̄)² / (m − 1)``,
    ``MSW = Σ nᵢ p̂ᵢ(1 − p̂ᵢ) / (N − m)`` and ``n₀ = (N − Σnᵢ²/N) / (m − 1)`` (Fleiss,
    Levin & Paik 2003, section 15; Ridout, Demétrio & Firth 1999, estimator "A"). Not
    floored: a negative value is underdispersion. ``None`` with fewer than two cells, no
    within-cell degrees of freedom, or a pooled rate of 0 or 1.
    """
    xa, na = _arrays(x, n)
    cells = int(xa.size)
    total = float(na.sum())
    if cells < 2 or total <= cells:
        return None
    pooled = float(xa.sum()) / total
    if not 0.0 < pooled < 1.0:
        return None
    phat = xa / na
    msb = float(np.sum(na * (phat - pooled) ** 2)) / (cells - 1)
    msw = float(np.sum(na * phat * (1.0 - phat))) / (total - cells)
    n0 = (total - float(np.sum(na**2)) / total) / (cells - 1)
    denominator = msb + (n0 - 1.0) * msw
    return None if denominator == 0.0 else (msb - msw) / denominator


def _moments_lr_p(xa: FloatArray, na: FloatArray, mean: float, rho: float) -> float:
    """LR p-value of the beta-binomial at (mean, rho) against the binomial at mean."""
    if rho <= 0.0:
        return 1.0
    scale = (1.0 - min(rho, _RHO_PUBLISHED)) / min(rho, _RHO_PUBLISHED)
    a, b = mean * scale, (1.0 - mean) * scale
    beta_binomial = float(np.sum(_sp.betaln(xa + a, na - xa + b) - _sp.betaln(a, b)))
    binomial = float(np.sum(xa * math.log(mean) + (na - xa) * math.log(1.0 - mean)))
    stat = max(0.0, 2.0 * (beta_binomial - binomial))
    return float(_sp.chdtrc(1, stat))


class _Likelihood:
    """Beta-binomial log-likelihood over many cells in O(max n) per evaluation.

    Uses ``log P(x) = log C(n, x) + Σ_{i<x} log(mu(1−rho) + i·rho)
    + Σ_{i<n−x} log((1−mu)(1−rho) + i·rho) − Σ_{i<n} log((1−rho) + i·rho)``,
    finite at rho = 0 (the binomial), and groups the terms by i across cells.
    """

    def __init__(self, xa: FloatArray, na: FloatArray) -> None:
        top = int(na.max())
        i = np.arange(top, dtype=np.float64)
        self.i = i
        self.cx = np.array([np.sum(xa > k) for k in range(top)], dtype=np.float64)
        self.cy = np.array([np.sum(na - xa > k) for k in range(top)], dtype=np.float64)
        self.cn = np.array([np.sum(na > k) for k in range(top)], dtype=np.float64)
        log_choose = _sp.gammaln(na + 1) - _sp.gammaln(xa + 1) - _sp.gammaln(na - xa + 1)
        self.const = float(np.sum(log_choose))
        self.lo = float(xa.sum())
        self.hi = float((na - xa).sum())

    def loglik(self, mu: float, rho: float) -> float:
        a = mu * (1.0 - rho) + self.i * rho
        b = (1.0 - mu) * (1.0 - rho) + self.i * rho
        c = (1.0 - rho) + self.i * rho
        # 0·log(0) terms (no cell reaches that i) are dropped, not evaluated.
        total = _weighted_log(self.cx, a) + _weighted_log(self.cy, b) - _weighted_log(self.cn, c)
        return self.const + total

    def best_mu(self, rho: float) -> float:
        """The mu maximising the likelihood at fixed rho: the root of a decreasing score."""
        if rho == 0.0:
            return self.lo / (self.lo + self.hi)
        one = 1.0 - rho

        def score(mu: float) -> float:
            a = mu * one + self.i * rho
            b = (1.0 - mu) * one + self.i * rho
            return float(np.sum(self.cx * one / a) - np.sum(self.cy * one / b))

        return float(_optimize().brentq(score, _MU_EDGE, 1.0 - _MU_EDGE, xtol=1e-14))

    def profile(self, rho: float) -> float:
        return self.loglik(self.best_mu(rho), rho)


def _weighted_log(weights: FloatArray, values: FloatArray) -> float:
    mask = weights > 0
    return float(np.sum(weights[mask] * np.log(values[mask])))


def _maximise(lik: _Likelihood, all_or_nothing: bool) -> tuple[float, float]:
    """Return (rho_hat, max loglik), checking both ends of [0, 1] explicitly."""
    if all_or_nothing:
        return (1.0, lik.profile(_RHO_MAX))
    found = _optimize().minimize_scalar(
        lambda r: -lik.profile(float(r)),
        bounds=(0.0, _RHO_MAX),
        method="bounded",
        options={"xatol": 1e-10},
    )
    rho = float(found.x)
    at_zero = lik.profile(0.0)
    if at_zero >= -float(found.fun):
        return (0.0, at_zero)
    return (rho, -float(found.fun))


def _profile_interval(
    lik: _Likelihood, rho_hat: float, top: float, alpha: float
) -> tuple[float, float]:
    """Profile-likelihood interval: rho with 2(top − l_p(rho)) <= chi2_1(1 − alpha)."""
    cut = float(_sp.chdtri(1, alpha)) / 2.0

    def gap(r: float) -> float:
        return top - lik.profile(r) - cut

    low = 0.0
    if rho_hat > 0.0 and gap(0.0) > 0.0:
        low = float(_optimize().brentq(gap, 0.0, min(rho_hat, _RHO_MAX), xtol=1e-10))
    high = 1.0
    if rho_hat < 1.0 and gap(_RHO_MAX) > 0.0:
        high = float(_optimize().brentq(gap, rho_hat, _RHO_MAX, xtol=1e-10))
    return (low, high)


def fit_mle(x: Sequence[int], n: Sequence[int], alpha: float = 0.05) -> MleFit:
    """Fit the beta-binomial (mu, rho) by maximum likelihood over cells of unequal n.

    rho is restricted to [0, 1]; the LR test of rho = 0 uses the ½χ²₀ + ½χ²₁ boundary
    mixture (Self & Liang 1987), the interval inverts the profile likelihood at
    χ²₁(1 − alpha). Not identified (``None``) when the pool has no damage, damage on
    every run, or no cell with n >= 2. If every cell is all-or-nothing the supremum is
    at rho = 1 exactly, reported as 1.0.
    """
    require_probability("alpha", alpha)
    xa, na = _arrays(x, n)
    cells = int(xa.size)
    total, hits = float(na.sum()), float(xa.sum())
    if cells == 0 or hits in (0.0, total) or float(na.max()) < 2.0:
        mean = hits / total if total else math.nan
        return MleFit(None, None, None, None, None, mean, math.nan, cells)
    lik = _Likelihood(xa, na)
    all_or_nothing = bool(np.all((xa == 0) | (xa == na)))
    rho, top = _maximise(lik, all_or_nothing)
    mean = lik.best_mu(min(rho, _RHO_MAX))
    null = lik.profile(0.0)
    stat = max(0.0, 2.0 * (top - null))
    lr_p = 1.0 if stat == 0.0 else 0.5 * float(_sp.chdtrc(1, stat))
    ci = _profile_interval(lik, rho, top, alpha)
    a, b = _prior(mean, rho)
    return MleFit(rho, ci, a, b, lr_p, mean, top, cells)
