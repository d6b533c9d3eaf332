from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.stats import pass_at_k, pass_pow_k, safe_pow_k
from kaudit.stats._passk import choose_ratio, pool_mean


@st.composite
def cell(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 60))
    return n, draw(st.integers(0, n))


def test_safe_pow_k_is_the_combinatorial_ratio() -> None:
    assert safe_pow_k(8, 3, 2) == pytest.approx(10 / 28)
    assert safe_pow_k(8, 3, 1) == pytest.approx(5 / 8)
    assert safe_pow_k(8, 3, 5) == pytest.approx(1 / 56)
    assert safe_pow_k(8, 3, 6) == 0.0


def test_pass_pow_k_and_pass_at_k_closed_forms() -> None:
    assert pass_pow_k(10, 7, 3) == pytest.approx(math.comb(7, 3) / math.comb(10, 3))
    # Chen et al. (2021): pass@k = 1 - C(n-c, k)/C(n, k).
    assert pass_at_k(10, 2, 3) == pytest.approx(1 - math.comb(8, 3) / math.comb(10, 3))
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(10, 8, 3) == 1.0


def test_k_beyond_n_is_undefined() -> None:
    assert math.isnan(safe_pow_k(4, 1, 5))
    assert math.isnan(pass_pow_k(4, 1, 5))
    assert math.isnan(pass_at_k(4, 1, 5))


def test_bad_counts_raise() -> None:
    with pytest.raises(ValueError):
        safe_pow_k(4, 5, 1)
    with pytest.raises(ValueError):
        pass_pow_k(4, -1, 1)
    with pytest.raises(ValueError):
        choose_ratio(2, 4, -1)


@given(cell(), st.integers(0, 60))
def test_choose_ratio_equals_exact_binomials(nx: tuple[int, int], k: int) -> None:
    n, a = nx
    got = choose_ratio(a, n, k)
    if k > n:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(math.comb(a, k) / math.comb(n, k), rel=1e-12, abs=1e-300)


@given(cell())
def test_estimators_in_unit_interval_and_monotone_in_k(nx: tuple[int, int]) -> None:
    n, c = nx
    for estimator in (safe_pow_k, pass_pow_k):
        values = [estimator(n, c, k) for k in range(1, n + 1)]
        assert all(0.0 <= v <= 1.0 for v in values)
        assert all(b <= a + 1e-15 for a, b in itertools.pairwise(values))
    at_k = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(0.0 <= v <= 1.0 for v in at_k)
    assert all(b >= a - 1e-15 for a, b in itertools.pairwise(at_k))


@given(cell())
def test_k1_estimators_are_the_plain_rates(nx: tuple[int, int]) -> None:
    n, c = nx
    assert safe_pow_k(n, c, 1) == pytest.approx((n - c) / n)
    assert pass_pow_k(n, c, 1) == pytest.approx(c / n)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pool_mean_leaves_out_undefined_cells() -> None:
    assert pool_mean([0.5, math.nan, 1.0]) == (0.75, 2)
    mean, cells = pool_mean([math.nan])
    assert math.isnan(mean) and cells == 0
