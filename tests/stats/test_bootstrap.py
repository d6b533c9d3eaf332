from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.stats import bootstrap_mean, bootstrap_ratio, resample_counts
from kaudit.stats._bootstrap import percentile_interval


@given(st.integers(1, 50), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_same_seed_same_resamples(cells: int, resamples: int, seed: int) -> None:
    a = resample_counts(cells, resamples, seed)
    b = resample_counts(cells, resamples, seed)
    assert np.array_equal(a, b)
    assert a.shape == (resamples, cells)
    assert np.all(a.sum(axis=1) == cells)


def test_different_seeds_differ() -> None:
    assert not np.array_equal(resample_counts(20, 50, 1), resample_counts(20, 50, 2))


def test_duplicates_count_twice() -> None:
    counts = np.array([[2, 0, 1], [0, 3, 0]])
    # Cell 0 drawn twice weighs twice: (2*1 + 0*5 + 1*9) / 3.
    got = bootstrap_ratio([1.0, 5.0, 9.0], [1.0, 1.0, 1.0], counts)
    assert got.tolist() == pytest.approx([11 / 3, 5.0])


def test_ratio_matches_an_explicit_loop() -> None:
    rng = np.random.default_rng(7)
    num, den = rng.random(12), rng.integers(0, 4, 12).astype(float)
    counts = resample_counts(12, 300, 3)
    got = bootstrap_ratio(num, den, counts)
    for row, value in zip(counts, got, strict=True):
        top = sum(c * v for c, v in zip(row, num, strict=True))
        bottom = sum(c * d for c, d in zip(row, den, strict=True))
        assert (math.isnan(value) and bottom == 0) or value == pytest.approx(top / bottom)


def test_mean_skips_undefined_cells_and_is_seeded() -> None:
    values = [0.2, math.nan, 0.6, 0.4]
    a = bootstrap_mean(values, resamples=500, seed=11)
    assert np.array_equal(a, bootstrap_mean(values, resamples=500, seed=11), equal_nan=True)
    defined = a[~np.isnan(a)]
    assert np.all((defined >= 0.2) & (defined <= 0.6))


def test_mean_on_given_counts_is_the_mean_on_drawn_ones() -> None:
    values = [0.2, math.nan, 0.6, 0.4]
    drawn = bootstrap_mean(values, resamples=500, seed=11)
    shared = bootstrap_mean(values, counts=resample_counts(4, 500, 11))
    assert np.array_equal(drawn, shared, equal_nan=True)
    with pytest.raises(TypeError):
        bootstrap_mean(values, resamples=500)
    with pytest.raises(TypeError):
        bootstrap_mean(values, resamples=500, seed=11, counts=resample_counts(4, 500, 11))


def test_percentile_interval_drops_nan_draws() -> None:
    draws = np.array([np.nan, *np.linspace(0, 1, 101)])
    assert percentile_interval(draws, 0.1) == pytest.approx((0.05, 0.95))
    low, high = percentile_interval([math.nan])
    assert math.isnan(low) and math.isnan(high)


def test_zero_cells_give_empty_counts() -> None:
    assert resample_counts(0, 5, 0).shape == (5, 0)
