"""The population audit miss rate: how often one run misses a damage-producing cell.

The observed miss rate (`audit_miss_rate`) averages ``(n − x)/n`` over the cells that
showed damage. That selection leaves out the damage-producing cells an audit happened to
miss, which are the rarely damaging ones, and each cell's value is at most
``(n − 1)/n``; so it is biased low and moves with k, a lower bound rather than an
estimate. Here the cells' damage rates are modelled instead, without conditioning on
observed damage: a share ``π`` of cells never damages (rate 0) and the others draw their
rate from a Beta(a, b); cell i's damage count is then zero-inflated beta-binomial,

    P(x_i) = π·[x_i = 0] + (1 − π)·C(n_i, x_i)·B(a + x_i, b + n_i − x_i) / B(a, b).

Among damage-producing cells one run misses with probability ``1 − μ``, ``μ = a/(a+b)``,
and k runs with ``E[(1 − p)^k] = B(a, b + k) / B(a, b)`` (Skellam 1948; zero inflation
as in Lambert 1992). Both come with profile-likelihood bounds.

The cut-off is χ²₂(1 − alpha)/2, not χ²₁'s: when the share of never-damaging cells is 0
it sits on the boundary of its range, where the profile likelihood ratio is no longer
χ²₁ (Self & Liang 1987); it is always at most the likelihood ratio at the truth over the
two parameters that matter after profiling out the interior one, whose law is χ²₂, so
the wider cut-off holds either way. With χ²₁ the interval covered 0.91 to 0.94 in
simulation under a plain Beta; with χ²₂ at least 0.95 (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit._require import require_probability
from kaudit.errors import InputError

from ._tally import CellTally

__all__ = ["POPULATION_METHOD", "PopulationMiss", "model_populations", "population_miss"]

POPULATION_METHOD = (
    "zero-inflated beta-binomial maximum likelihood, profile-likelihood bounds at the "
    "chi-square(2) cut-off (Skellam 1948; Lambert 1992; Self & Liang 1987)"
)
"""The estimate's name as outputs print it."""

FloatArray = npt.NDArray[np.float64]

_LOG_S = (-8.0, 14.0)  # log(a + b): from all-or-nothing cells to one common rate
_MU_EDGE = 1e-9
_GRID = 16


def _optimize() -> Any:
    """scipy.optimize, imported on first use (~0.3 s)."""
    from scipy import optimize

    return optimize


class _Likelihood:
    """The zero-inflated beta-binomial log-likelihood, cells grouped by (n, x).

    For given (a, b) the share π of never-damaging cells is maximised in closed form when
    every zero cell has the same n, else by the root of its decreasing score.
    """

    def __init__(self, x: Sequence[int], n: Sequence[int]) -> None:
        pairs, weights = np.unique(np.stack([np.asarray(n), np.asarray(x)], axis=1), axis=0,
                                   return_counts=True)  # fmt: skip
        size, hits, w = (pairs[:, 0].astype(float), pairs[:, 1].astype(float),
                         weights.astype(float))  # fmt: skip
        damaged = hits > 0
        self.dn, self.dx, self.dw = size[damaged], hits[damaged], w[damaged]
        self.zn, self.zw = size[~damaged], w[~damaged]
        self.damaged = float(self.dw.sum())
        choose = _sp.gammaln(size + 1) - _sp.gammaln(hits + 1) - _sp.gammaln(size - hits + 1)
        self.const = float(np.sum(w * choose))

    def at(self, mu: float, log_s: float) -> tuple[float, float]:
        """(log-likelihood, π̂) at mean mu and a + b = exp(log_s), π maximised out."""
        s = math.exp(log_s)
        a, b = mu * s, (1.0 - mu) * s
        base = float(_sp.betaln(a, b))
        value = float(np.sum(self.dw * (_sp.betaln(a + self.dx, b + self.dn - self.dx) - base)))
        if self.zn.size == 0:
            return value + self.const, 0.0
        clean = np.exp(_sp.betaln(a, b + self.zn) - base)
        share = self._share(clean)
        zeros = float(np.sum(self.zw * np.log(share + (1.0 - share) * clean)))
        kept = self.damaged * math.log1p(-share) if share > 0.0 else 0.0
        return value + kept + zeros + self.const, share

    def _share(self, clean: FloatArray) -> float:
        """π̂ given each zero group's chance of no damage under the Beta: the score's root."""

        def score(share: float) -> float:
            zeros = np.sum(self.zw * (1.0 - clean) / (share + (1.0 - share) * clean))
            return float(zeros) - self.damaged / (1.0 - share)

        if score(0.0) <= 0.0:
            return 0.0
        if self.zn.size == 1:  # one zero group: the fitted zero share equals the observed
            observed = float(self.zw[0]) / (float(self.zw[0]) + self.damaged)
            return max(0.0, (observed - float(clean[0])) / (1.0 - float(clean[0])))
        return float(_optimize().brentq(score, 0.0, 1.0 - 1e-12, xtol=1e-14))

    def profile(self, mu: float) -> tuple[float, float]:
        """(max over a + b of the log-likelihood at mean mu, the maximising log(a + b))."""
        found = _optimize().minimize_scalar(
            lambda t: -self.at(mu, float(t))[0],
            bounds=_LOG_S,
            method="bounded",
            options={"xatol": 1e-6},
        )
        return -float(found.fun), float(found.x)


@dataclass(frozen=True)
class PopulationMiss:
    """The fitted population and its single-run miss rate; fields ``None`` if not identified.

    Attributes:
        miss: One run's chance of missing a damage-producing cell, ``1 − μ̂``.
        interval: Profile-likelihood (1 − alpha) bounds on it (χ²₂ cut-off).
        mean: ``μ̂``, the mean damage rate of the damage-producing cells.
        never: ``π̂``, the share of cells that never damage.
        log_s: ``log(a + b)`` at the maximum (large: one common rate; small: all or none).
        loglik: The maximised log-likelihood.
        cells: Cells the fit used (n >= 1).
        alpha: The bounds' level.
        method: What was computed, as outputs name it.
    """

    miss: float | None
    interval: tuple[float, float] | None
    mean: float | None
    never: float | None
    log_s: float | None
    loglik: float
    cells: int
    alpha: float
    method: str = POPULATION_METHOD
    likelihood: _Likelihood | None = field(default=None, repr=False, compare=False)

    def miss_upper(self, k: int) -> float:
        """The upper bound of the k-run miss rate ``E[(1 − p)^k]`` (NaN if not identified).

        ``E[(1 − p)^k]`` falls as μ rises and as a + b rises (a Beta of fixed mean
        narrows, and ``(1 − p)^k`` is convex), so for each μ in the profile region its
        largest value is at the smallest a + b the region allows; the largest over μ is
        found by Brent's method. At k = 1 it is the upper end of ``interval``.
        """
        if self.likelihood is None or self.interval is None or k < 1:
            return math.nan
        return _miss_upper(self.likelihood, self, k)

    def runs_to_detect(self, detect: float, cap: int = 100_000) -> int | None:
        """The fewest runs per cell whose k-run miss rate's upper bound is <= ``1 − detect``.

        What `kaudit plan` uses: the conservative end, so a plan holds unless the
        population is worse than the data allow. None when not identified, or when even
        ``cap`` runs do not get there (the region allows cells damaging so rarely that no
        audit of that size sees them).
        """
        target = 1.0 - detect
        if self.likelihood is None or not self.miss_upper(cap) <= target:
            return None
        low, high = 0, cap  # miss_upper(high) <= target < miss_upper(low) (= 1 at k = 0)
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if self.miss_upper(mid) <= target else (mid, high)
        return high

    def to_json(self) -> dict[str, Any]:
        """The `kaudit stats --json` block under ``audit_miss_rate.population``."""
        return {
            "method": self.method,
            "miss": self.miss,
            "interval": None if self.interval is None else list(self.interval),
            "mean_damage_rate": self.mean,
            "never_damaging_share": self.never,
            "cells": self.cells,
        }


def population_miss(x: Sequence[int], n: Sequence[int], alpha: float = 0.05) -> PopulationMiss:
    """Fit the zero-inflated beta-binomial and bound the single-run miss rate.

    Not identified (``None`` fields, NaN log-likelihood) without a cell that damaged at
    least once, or without a cell of at least two runs.
    """
    require_probability("alpha", alpha)
    xs = [int(v) for v, size in zip(x, n, strict=True) if size > 0]
    ns = [int(size) for size in n if size > 0]
    if any(not 0 <= v <= size for v, size in zip(xs, ns, strict=True)):
        raise InputError("x", "must be in [0, `n`] in every cell")
    if not any(xs) or max(ns, default=0) < 2:
        return PopulationMiss(None, None, None, None, None, math.nan, len(ns), alpha)
    lik = _Likelihood(xs, ns)
    mu, top = _maximum(lik)
    log_s = lik.profile(mu)[1]
    never = float(lik.at(mu, log_s)[1])
    low, high = _profile_bounds(lik, mu, top, _cut(alpha))
    bounds = (1.0 - high, 1.0 - low)
    return PopulationMiss(1.0 - mu, bounds, mu, never, log_s, top, len(ns), alpha, likelihood=lik)


def model_populations(
    tallies: Sequence[CellTally], alpha: float = 0.05
) -> Mapping[str, PopulationMiss]:
    """`population_miss` fitted to each model's cells apart, in the order models first appear.

    A model's cells are one population: its tasks, damaging or not. Two models of
    different damage rates pooled are a mixture no single Beta describes, and its fit
    answers for neither (a careful model's miss rate pulled down by a careless one's
    damage), so `kaudit stats` and `kaudit plan` both fit one per model.
    """
    models: dict[str, list[CellTally]] = {}
    for t in tallies:
        models.setdefault(t.model, []).append(t)
    return {
        model: population_miss([t.damage for t in cells], [t.n for t in cells], alpha)
        for model, cells in models.items()
    }


def _cut(alpha: float) -> float:
    """Half the χ²₂ (1 − alpha) quantile: ``−log(alpha)``."""
    return -math.log(alpha)


def _maximum(lik: _Likelihood) -> tuple[float, float]:
    """(μ̂, max log-likelihood): a grid over μ to find the peak, then Brent's method around it."""
    grid = np.linspace(0.5 / _GRID, 1.0 - 0.5 / _GRID, _GRID)
    values = [lik.profile(float(mu))[0] for mu in grid]
    best = int(np.argmax(values))
    low = float(grid[best - 1]) if best > 0 else _MU_EDGE
    high = float(grid[best + 1]) if best < _GRID - 1 else 1.0 - _MU_EDGE
    found = _optimize().minimize_scalar(
        lambda mu: -lik.profile(float(mu))[0],
        bounds=(low, high),
        method="bounded",
        options={"xatol": 1e-9},
    )
    if -float(found.fun) >= values[best]:
        return float(found.x), -float(found.fun)
    return float(grid[best]), float(values[best])


def _profile_bounds(lik: _Likelihood, mu: float, top: float, cut: float) -> tuple[float, float]:
    """The μ where the profile log-likelihood falls ``cut`` below its maximum, each side."""

    def gap(m: float) -> float:
        return top - lik.profile(m)[0] - cut

    brentq = _optimize().brentq
    low = _MU_EDGE if gap(_MU_EDGE) <= 0.0 else float(brentq(gap, _MU_EDGE, mu, xtol=1e-10))
    edge = 1.0 - _MU_EDGE
    high = edge if gap(edge) <= 0.0 else float(brentq(gap, mu, edge, xtol=1e-10))
    return low, high


def k_run_miss(mu: float, log_s: float, k: int) -> float:
    """``E[(1 − p)^k]`` for p ~ Beta(μs, (1 − μ)s): ``B(a, b + k) / B(a, b)``."""
    s = math.exp(log_s)
    a, b = mu * s, (1.0 - mu) * s
    return math.exp(float(_sp.betaln(a, b + k) - _sp.betaln(a, b)))


def _miss_upper(lik: _Likelihood, fit: PopulationMiss, k: int) -> float:
    """`PopulationMiss.miss_upper`'s search over the profile region's lower edge in a + b."""
    if fit.mean is None or fit.interval is None or fit.log_s is None:
        return math.nan
    floor = fit.loglik - _cut(fit.alpha)
    mu_low, mu_high = 1.0 - fit.interval[1], 1.0 - fit.interval[0]

    def smallest_log_s(mu: float) -> float:
        peak_value, peak = lik.profile(mu)
        if peak_value < floor:
            return peak
        if lik.at(mu, _LOG_S[0])[0] >= floor:
            return _LOG_S[0]
        return float(_optimize().brentq(lambda t: lik.at(mu, t)[0] - floor, _LOG_S[0], peak))

    def negative(mu: float) -> float:
        return -k_run_miss(mu, smallest_log_s(mu), k)

    found = _optimize().minimize_scalar(
        negative, bounds=(mu_low, mu_high), method="bounded", options={"xatol": 1e-8}
    )
    return max(-float(found.fun), -negative(mu_low))
