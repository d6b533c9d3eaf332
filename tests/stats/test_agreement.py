from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from kaudit.stats import agreement, all_clean_probability, cohen_kappa, runs_to_detect

counts = st.integers(min_value=0, max_value=200)


def test_kappa_matches_the_hand_computed_value() -> None:
    """Bug caught: chance agreement from one marginal only (p_e = 0.6 gives 0.25, not 0.4)."""
    # p_o = 35/50 = 0.7; marginals 0.5 and 0.6, so p_e = 0.5·0.6 + 0.5·0.4 = 0.5.
    assert math.isclose(cohen_kappa(20, 5, 10, 15), (0.7 - 0.5) / (1 - 0.5))
    assert cohen_kappa(10, 0, 0, 10) == 1.0
    assert math.isclose(cohen_kappa(0, 10, 10, 0), -1.0)


def test_kappa_is_undefined_when_both_graders_give_one_label() -> None:
    """Bug caught: returning 0 or 1 (or dividing by zero) when p_e = 1."""
    assert math.isnan(cohen_kappa(0, 0, 0, 7))
    assert math.isnan(cohen_kappa(7, 0, 0, 0))
    assert math.isnan(cohen_kappa(0, 0, 0, 0))


@given(counts, counts, counts, counts)
def test_kappa_equals_the_two_by_two_closed_form(a: int, b: int, c: int, d: int) -> None:
    """Bug caught: a kappa formula that swaps a marginal; checked against 2(ad−bc)/(…)."""
    denominator = (a + b) * (b + d) + (a + c) * (c + d)
    kappa = cohen_kappa(a, b, c, d)
    if denominator == 0:
        assert math.isnan(kappa)
    else:
        assert math.isclose(kappa, 2 * (a * d - b * c) / denominator, abs_tol=1e-12)
        assert math.isclose(kappa, cohen_kappa(a, c, b, d), abs_tol=1e-12)  # symmetric


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_agreement_tallies_every_pair_once(pairs: list[tuple[bool, bool]]) -> None:
    """Bug caught: grader-only and reference-only cells swapped in the tally."""
    table = agreement(pairs)
    assert table.runs == len(pairs)
    assert table.reference_only == sum(1 for g, r in pairs if r and not g)
    assert table.grader_only == sum(1 for g, r in pairs if g and not r)


@given(st.floats(min_value=0.001, max_value=1.0), st.floats(min_value=0.001, max_value=0.5))
def test_decay_curve_crosses_alpha_exactly_at_runs_to_detect(p: float, alpha: float) -> None:
    """Bug caught: the marker on a decay curve one k off the curve's crossing."""
    k = runs_to_detect(p, alpha)
    assert all_clean_probability(p, k) <= alpha * (1 + 1e-12)
    if k > 1:
        assert all_clean_probability(p, k - 1) > alpha * (1 + 1e-12)
