"""The ICC a summary leads with: moments for equal cells, the likelihood for unequal ones."""

from __future__ import annotations

import numpy as np
import pytest

from kaudit.stats import CellTally, anova_icc, fit_mle, fit_moments, summarize
from kaudit.stats._headline import icc_headline


def test_unequal_cells_lead_with_maximum_likelihood_which_is_unbiased_there() -> None:
    """300 seeded pools of 40 cells of 8 runs and 40 of 24, rates from a Beta of mean 0.1
    and ICC 0.14: the moments estimator with n̄ averages 0.160 (biased up), the one-way
    ANOVA 0.137 and maximum likelihood 0.139; the headline is maximum likelihood. Fails if
    the headline stayed on moments when cell sizes differ, or if ANOVA/ML lost their
    unequal-n weighting."""
    rng = np.random.default_rng(0)
    s = 1 / 0.14 - 1
    n = np.array([8] * 40 + [24] * 40)
    moments, anova, mle = [], [], []
    for _ in range(300):
        x = rng.binomial(n, rng.beta(0.1 * s, 0.9 * s, size=80))
        moments.append(fit_moments(x, n).icc_raw)
        anova.append(anova_icc(x, n))
        mle.append(fit_mle(x, n).icc)
    assert np.mean(moments) == pytest.approx(0.1602, abs=1e-3)
    assert abs(np.mean(anova) - 0.14) < 0.005
    assert abs(np.mean([v for v in mle if v is not None]) - 0.14) < 0.005
    headline = icc_headline(list(n), fit_moments(x, n), anova_icc(x, n), fit_mle(x, n))
    assert headline.estimator == "mle" and headline.icc == fit_mle(x, n).icc


def test_equal_cells_lead_with_the_published_moments_number() -> None:
    """Fails if equal cells stopped leading with moments (AgentRelBench's number), or if the
    summary's JSON lost the headline."""
    cells = [CellTally("m", f"t{i}", 8, x, x, 0) for i, x in enumerate([0, 1, 3, 0, 2, 0, 0, 5])]
    summary = summarize(cells, bootstrap=50)
    assert summary.headline is not None and summary.headline.estimator == "moments"
    assert summary.to_json()["beta_binomial"]["headline"]["icc"] == summary.moments.icc
    unequal = [*cells[:-1], CellTally("m", "t7", 24, 5, 5, 0)]
    assert summarize(unequal, bootstrap=50).headline.estimator == "mle"  # type: ignore[union-attr]
