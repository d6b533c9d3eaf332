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
    with pytest.raises(ValueError, match="`p` must be"):
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


@given(st.floats(1e-300, 1e-4))
def test_runs_to_detect_is_bounded_and_exact_for_tiny_p(p: float) -> None:
    """A settle loop stepping one k at a time (or the float 1 - p) would hang or be off."""
    k = runs_to_detect(p, 0.05)
    limit = math.log(0.05 * (1 + 1e-12))
    assert k * math.log1p(-p) <= limit + 1e-9
    assert (k - 1) * math.log1p(-p) > limit - 1e-9


def test_runs_to_detect_one_in_ten_trillion() -> None:
    """`kaudit plan --p 1e-13` used to loop for ever; log(1/0.05) / 1e-13 runs it is."""
    assert runs_to_detect(1e-13, 0.05) == math.ceil(
        math.log(0.05 * (1 + 1e-12)) / math.log1p(-1e-13)
    )


def test_runs_to_detect_refuses_a_p_too_small_to_plan() -> None:
    """Without the finiteness check, ceil(inf) raised a bare OverflowError."""
    with pytest.raises(ValueError, match="too small"):
        runs_to_detect(5e-324, 0.05)
