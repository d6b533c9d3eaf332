from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from kaudit.stats import clopper_pearson, prevalence_upper, wilson


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 400))
    return draw(st.integers(0, n)), n


def test_clopper_pearson_matches_published_examples() -> None:
    assert clopper_pearson(3, 8) == pytest.approx((0.0852, 0.7551), abs=5e-5)
    assert clopper_pearson(12, 16) == pytest.approx((0.4762, 0.9273), abs=5e-5)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.32])
@pytest.mark.parametrize("n", [1, 2, 8, 16, 50, 333])
def test_clopper_pearson_equals_scipy_beta_quantiles(n: int, alpha: float) -> None:
    for x in range(n + 1):
        low, high = clopper_pearson(x, n, alpha)
        want_low = 0.0 if x == 0 else sps.beta.ppf(alpha / 2, x, n - x + 1)
        want_high = 1.0 if x == n else sps.beta.ppf(1 - alpha / 2, x + 1, n - x)
        assert abs(low - want_low) < 1e-9
        assert abs(high - want_high) < 1e-9


def test_clopper_pearson_of_empty_cell_is_undefined() -> None:
    low, high = clopper_pearson(0, 0)
    assert math.isnan(low) and math.isnan(high)


def test_clopper_pearson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match=r"`x` must be in \[0, n\]"):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson(1, 4, alpha=1.5)


def test_wilson_matches_newcombe_1998_table() -> None:
    # Newcombe (1998), Stat Med 17:857, method 3 (score interval without correction).
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(1, 29) == pytest.approx((0.0061, 0.1718), abs=1e-4)


@given(counts(), st.sampled_from(["cp", "wilson"]))
def test_interval_contains_phat(xn: tuple[int, int], method: str) -> None:
    x, n = xn
    low, high = (clopper_pearson if method == "cp" else wilson)(x, n)
    assert 0.0 <= low <= x / n <= high <= 1.0


@given(counts(), st.floats(0.001, 0.5), st.floats(0.001, 0.5))
def test_intervals_nest_as_alpha_shrinks(xn: tuple[int, int], a: float, b: float) -> None:
    x, n = xn
    small, large = min(a, b), max(a, b)
    for method in (clopper_pearson, wilson):
        wide, narrow = method(x, n, small), method(x, n, large)
        assert wide[0] <= narrow[0] + 1e-12
        assert narrow[1] <= wide[1] + 1e-12


def test_prevalence_upper_with_none_observed_is_closed_form() -> None:
    assert prevalence_upper(0, 13) == pytest.approx(1 - 0.05 ** (1 / 13), abs=1e-15)
    assert prevalence_upper(0, 13) == pytest.approx(0.20582, abs=1e-5)
    # The rule of three approximates it for large samples.
    assert prevalence_upper(0, 3000) == pytest.approx(3 / 3000, rel=0.01)


def test_prevalence_upper_is_one_sided_clopper_pearson() -> None:
    assert prevalence_upper(2, 20, 0.1) == pytest.approx(sps.beta.ppf(0.9, 3, 18), abs=1e-12)
    assert prevalence_upper(20, 20) == 1.0
    assert math.isnan(prevalence_upper(0, 0))
