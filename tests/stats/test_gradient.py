from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from kaudit.stats import CellTally, capability_gradient
from kaudit.stats._gradient import spearman_rows


@given(st.lists(st.integers(0, 6), min_size=2, max_size=8))
def test_spearman_rows_matches_scipy(values: list[int]) -> None:
    assume(len(set(values)) > 1)
    want = stats.spearmanr(np.arange(len(values)), values).statistic
    assert spearman_rows(values)[0] == pytest.approx(want, abs=1e-12)


def test_constant_row_is_undefined_not_a_warning() -> None:
    assert np.isnan(spearman_rows([[2, 2, 2]])[0])


def _pool(counts: dict[str, int], tasks: int = 10) -> list[CellTally]:
    return [
        CellTally(model, f"t{i}", 8, 1 if i < k else 0, 1 if i < k else 0, 0)
        for model, k in counts.items()
        for i in range(tasks)
    ]


def test_gradient_counts_and_rho() -> None:
    g = capability_gradient(
        _pool({"a": 7, "b": 2, "c": 2, "d": 2}), ["a", "b", "c", "d"], resamples=500, seed=1
    )
    assert g.counts == (7, 2, 2, 2)
    assert g.spearman == pytest.approx(stats.spearmanr([1, 2, 3, 4], [7, 2, 2, 2]).statistic)
    assert g.ci is not None and g.ci[0] <= g.spearman <= g.ci[1]
    again = capability_gradient(
        _pool({"a": 7, "b": 2, "c": 2, "d": 2}), ["a", "b", "c", "d"], resamples=500, seed=1
    )
    assert again == g


def test_gradient_with_all_counts_tied_is_undefined() -> None:
    g = capability_gradient(_pool({"a": 0, "b": 0}), ["a", "b"], resamples=50)
    assert g.spearman is None and g.ci is None and g.undefined == 50


def test_gradient_rejects_unknown_model() -> None:
    with pytest.raises(ValueError, match="missing"):
        capability_gradient(_pool({"a": 1, "b": 2}), ["a", "z"])
