from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.stats import CellTally, clopper_pearson, plan_cells, runs_to_detect


def test_runs_to_detect_known_values() -> None:
    # log(0.05)/log(0.875) = 22.43 -> 23 runs.
    assert runs_to_detect(0.125, 0.05) == 23
    assert runs_to_detect(1.0, 0.05) == 1
    assert runs_to_detect(0.5, 0.25) == 2  # (1/2)^2 = 1/4 exactly
    assert runs_to_detect(0.95, 0.05) == 1


def test_runs_to_detect_rejects_zero_probability() -> None:
    with pytest.raises(ValueError, match="p must be"):
        runs_to_detect(0.0)


@given(st.floats(1e-4, 1.0), st.floats(1e-4, 0.9999))
def test_runs_to_detect_is_the_smallest_sufficient_k(p: float, alpha: float) -> None:
    k = runs_to_detect(p, alpha)
    slack = alpha * (1 + 1e-12)
    assert (1 - p) ** k <= slack
    assert k == 1 or (1 - p) ** (k - 1) > slack


def test_plan_cells_uses_the_exact_lower_bound() -> None:
    tallies = [CellTally("m", "a", 8, 3, 3, 0), CellTally("m", "b", 8, 0, 0, 8)]
    (plan,) = plan_cells(tallies, alpha=0.05)
    low = clopper_pearson(3, 8)[0]
    assert plan.p_low == pytest.approx(0.0852, abs=5e-5)
    assert plan.runs == runs_to_detect(low, 0.05) == math.ceil(math.log(0.05) / math.log(1 - low))
    assert plan.runs == 34
