"""Clopper-Pearson intervals cover a known damage probability at least 95% of the time."""

from __future__ import annotations

import numpy as np
import pytest

from kaudit.stats import clopper_pearson


@pytest.mark.parametrize("p", [0.02, 0.125, 0.3, 0.5, 0.75])
@pytest.mark.parametrize("n", [8, 16, 40])
def test_clopper_pearson_covers_the_truth(p: float, n: int) -> None:
    rng = np.random.default_rng(20260717 + int(p * 1000) + n)
    campaigns = 4000
    x = rng.binomial(n, p, size=campaigns)
    # One interval per possible x, then look each campaign up.
    table = [clopper_pearson(int(k), n) for k in range(n + 1)]
    covered = sum(table[k][0] <= p <= table[k][1] for k in x)
    # Exact guarantee: coverage >= 0.95 for every p; the simulation has no slack to
    # absorb Monte Carlo error except that CP is conservative, so also check the exact
    # coverage computed from the binomial law.
    exact = sum(
        float(np.exp(_log_binom(n, k, p))) for k in range(n + 1) if table[k][0] <= p <= table[k][1]
    )
    assert exact >= 0.95
    assert covered / campaigns >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / campaigns)


def _log_binom(n: int, k: int, p: float) -> float:
    from math import lgamma, log

    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(p) + (n - k) * log(1 - p)


def test_simulated_campaigns_cover_at_least_95_percent_overall() -> None:
    rng = np.random.default_rng(4)
    truths = rng.uniform(0.01, 0.6, size=100)
    hits = total = 0
    for p in truths:
        x = rng.binomial(16, p, size=200)
        for k in x:
            low, high = clopper_pearson(int(k), 16)
            hits += low <= p <= high
            total += 1
    assert hits / total >= 0.95
