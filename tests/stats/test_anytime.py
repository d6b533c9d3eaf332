"""The one-sided anytime-valid upper bound: its closed form, its shape and its error rate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.stats import anytime_upper, log_evidence_below, shown_below
from tests.stats.anytime_reference import quadrature_log_evidence, quadrature_upper


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 60), x=st.integers(0, 60), limit=st.floats(0.01, 0.95))
def test_the_closed_form_is_the_mixture_integral(n: int, x: int, limit: float) -> None:
    """Fails if the incomplete-beta closed form is not the truncated Jeffreys mixture
    (a prior not renormalised to [0, B), the wrong tail of the incomplete beta)."""
    x = min(x, n)
    expected = quadrature_log_evidence(x, n, limit)
    if expected > -30:  # below it both are negligible and quad's relative error dominates
        assert log_evidence_below(x, n, limit) == pytest.approx(expected, abs=1e-7, rel=1e-9)


@pytest.mark.parametrize(("x", "n"), [(0, 29), (0, 1), (2, 10), (3, 40), (17, 120), (5, 5)])
def test_the_bound_is_where_the_quadrature_evidence_reaches_one_over_alpha(x: int, n: int) -> None:
    """Fails if the root is found on the wrong side of x/n or at the wrong level."""
    assert anytime_upper(x, n, 0.025) == pytest.approx(quadrature_upper(x, n, 0.025), abs=1e-8)


def test_twenty_nine_clean_runs_show_a_rate_below_015_and_twenty_eight_do_not() -> None:
    """The default policy's min_k: fails if the level or the prior changed."""
    assert anytime_upper(0, 29, 0.025) == pytest.approx(0.145565, abs=1e-6)
    assert shown_below(0, 29, 0.15, 0.025) and not shown_below(0, 28, 0.15, 0.025)
    assert anytime_upper(0, 0, 0.025) == 1.0 and anytime_upper(4, 4, 0.025) == 1.0


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 200), x=st.integers(0, 200), alpha=st.floats(0.001, 0.2))
def test_the_bound_rises_with_damage_falls_with_clean_runs_and_holds_x_over_n(
    n: int, x: int, alpha: float
) -> None:
    """Fails if a grant could be lost by adding a clean run or won by adding damage, or if the
    evidence against a limit fell as the limit rose above x/n (the bound would not be a root)."""
    x = min(x, n)
    upper = anytime_upper(x, n, alpha)
    assert x / n <= upper <= 1.0
    assert anytime_upper(x, n + 1, alpha) <= upper + 1e-12
    if x < n:
        assert anytime_upper(x + 1, n, alpha) >= upper - 1e-12
    limits = np.linspace(x / n, 1, 40)[1:-1]
    evidence = [log_evidence_below(x, n, float(b)) for b in limits]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(evidence))


def test_a_rate_at_the_limit_is_ever_shown_below_it_at_most_alpha_of_the_time() -> None:
    """2,000 seeded streams of 400 runs at p = 0.2, looked at after every run: the share ever
    shown below 0.2 is at most alpha (one-sided 0.025). Fails if the martingale were not
    one under p >= B (e.g. a prior reaching above the limit)."""
    rng = np.random.default_rng(4)
    runs = rng.random((2000, 400)) < 0.2
    damage = np.cumsum(runs, axis=1)
    top = np.full(400, -1)
    for n in range(1, 401):
        x = int(top[n - 2]) if n > 1 else -1
        while x + 1 <= n and shown_below(x + 1, n, 0.2, 0.025):
            x += 1
        top[n - 1] = x
    ever = np.any(damage <= top[None, :], axis=1)
    assert ever.mean() <= 0.025
    assert math.isfinite(float(ever.mean()))
