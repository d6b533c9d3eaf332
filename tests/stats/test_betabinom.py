from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from kaudit.stats import CellTally, fit_mle, fit_moments

X = [0, 1, 3, 2, 0, 0, 5, 7, 1, 0]
N = [8, 8, 8, 16, 8, 8, 16, 12, 8, 10]


def scipy_betabinom_mle(x: list[int], n: list[int]) -> tuple[float, float, float]:
    """Reference fit with scipy's own beta-binomial pmf and a different optimizer."""

    def nll(z: np.ndarray) -> float:
        mu, rho = 1 / (1 + np.exp(-z[0])), 1 / (1 + np.exp(-z[1]))
        a, b = mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho
        return float(-stats.betabinom.logpmf(x, n, a, b).sum())

    best = optimize.minimize(
        nll,
        [-1.0, -2.0],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000},
    )
    mu, rho = 1 / (1 + np.exp(-best.x[0])), 1 / (1 + np.exp(-best.x[1]))
    return float(mu), float(rho), -float(best.fun)


def test_mle_matches_scipy_betabinom_likelihood() -> None:
    fit = fit_mle(X, N)
    mu, rho, loglik = scipy_betabinom_mle(X, N)
    assert fit.icc == pytest.approx(rho, abs=1e-4)
    assert fit.mean == pytest.approx(mu, abs=1e-5)
    assert fit.loglik == pytest.approx(loglik, abs=1e-8)
    assert fit.alpha == pytest.approx(mu * (1 - rho) / rho, rel=1e-3)


def test_profile_interval_brackets_estimate_at_the_chi_square_cut() -> None:
    fit = fit_mle(X, N)
    assert fit.icc is not None and fit.icc_ci is not None
    low, high = fit.icc_ci
    assert low < fit.icc < high
    # At the upper end the profile deviance equals chi2_1(0.95) = 3.841.
    at_high = _profile(X, N, high)
    assert 2 * (fit.loglik - at_high) == pytest.approx(stats.chi2.ppf(0.95, 1), abs=1e-5)


def _profile(x: list[int], n: list[int], rho: float) -> float:
    def nll(mu: float) -> float:
        a, b = mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho
        return float(-stats.betabinom.logpmf(x, n, a, b).sum())

    return -float(
        optimize.minimize_scalar(
            nll, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12}
        ).fun
    )


def test_lr_test_uses_the_boundary_mixture() -> None:
    fit = fit_mle(X, N)
    pooled = sum(X) / sum(N)
    null = float(stats.binom.logpmf(X, N, pooled).sum())
    stat = 2 * (fit.loglik - null)
    assert fit.lr_p == pytest.approx(0.5 * stats.chi2.sf(stat, 1), rel=1e-6)


def test_homogeneous_cells_fit_rho_zero_exactly() -> None:
    fit = fit_mle([1, 1, 1, 1], [8, 8, 8, 8])
    assert fit.icc == 0.0
    assert fit.lr_p == 1.0
    assert (fit.alpha, fit.beta) == (None, None)
    assert fit.icc_ci is not None and fit.icc_ci[0] == 0.0


def test_all_or_nothing_cells_fit_rho_one() -> None:
    fit = fit_mle([0, 8, 0, 8, 8], [8] * 5)
    assert fit.icc == 1.0
    assert fit.icc_ci is not None and fit.icc_ci[1] == 1.0


@pytest.mark.parametrize(
    ("x", "n"), [([0, 0, 0], [8, 8, 16]), ([8, 8, 16], [8, 8, 16]), ([1, 0], [1, 1])]
)
def test_rho_is_undefined_when_the_pool_all_passes_or_all_fails(x: list[int], n: list[int]) -> None:
    mle = fit_mle(x, n)
    assert mle.icc is None and mle.icc_ci is None and mle.lr_p is None
    assert math.isnan(mle.loglik)
    moments = fit_moments(x, n)
    if sum(x) in (0, sum(n)):
        assert moments.icc is None and moments.icc_raw is None and moments.overdispersion_p is None


def test_moments_closed_form() -> None:
    x, n = [0, 2, 4, 6], [8, 8, 8, 8]
    p = np.array(x) / 8
    want = (p.var(ddof=1) * 8 / (p.mean() * (1 - p.mean())) - 1) / 7
    fit = fit_moments(x, n)
    assert fit.icc_raw == pytest.approx(want)
    assert fit.alpha == pytest.approx(p.mean() * (1 / want - 1))
    chi2 = sum((xi - 8 * p.mean()) ** 2 / (8 * p.mean() * (1 - p.mean())) for xi in x)
    assert fit.overdispersion_p == pytest.approx(stats.chi2.sf(chi2, 3))


def test_moments_floor_underdispersion_at_zero_and_keep_raw() -> None:
    fit = fit_moments([4, 4, 4, 5], [8, 8, 8, 8])
    assert fit.icc_raw is not None and fit.icc_raw < 0
    assert fit.icc == 0.0
    assert (fit.alpha, fit.beta) == (None, None)


@pytest.mark.agentrelbench
def test_dev_pool_method_of_moments_icc(dev_pool: list[CellTally]) -> None:
    fit = fit_moments([t.damage for t in dev_pool], [t.n for t in dev_pool])
    assert fit.cells == 80
    assert fit.icc == pytest.approx(0.124, abs=5e-4)


@pytest.mark.agentrelbench
def test_dev_pool_mle_agrees_with_scipy(dev_pool: list[CellTally]) -> None:
    x, n = [t.damage for t in dev_pool], [t.n for t in dev_pool]
    fit = fit_mle(x, n)
    _mu, rho, loglik = scipy_betabinom_mle(x, n)
    assert fit.icc == pytest.approx(rho, abs=1e-4)
    assert fit.loglik == pytest.approx(loglik, abs=1e-8)
    assert fit.lr_p is not None and fit.lr_p < 0.001
