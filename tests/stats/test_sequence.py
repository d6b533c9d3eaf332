"""The beta-binomial confidence sequence and the identified range of a partly observed rate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from kaudit.stats import beta_binomial_cs, clopper_pearson, identified_range
from kaudit.stats._sequence import confidence_sequence

ALPHA = 0.05


@st.composite
def counts(draw: st.DrawFn, max_n: int = 400) -> tuple[int, int]:
    n = draw(st.integers(1, max_n))
    return draw(st.integers(0, n)), n


def _log_martingale(p: float, x: int, n: int) -> float:
    """The mixture martingale written out independently of the module (Jeffreys prior)."""
    mix = special.betaln(0.5 + x, 0.5 + n - x) - special.betaln(0.5, 0.5)
    return float(mix - special.xlogy(x, p) - special.xlog1py(n - x, -p))


@given(counts(), st.sampled_from([0.01, 0.05, 0.1, 0.3]))
def test_ends_are_where_the_martingale_reaches_one_over_alpha(
    xn: tuple[int, int], alpha: float
) -> None:
    """Fails if the root finder brackets the wrong side or the mixture constant is off."""
    x, n = xn
    low, high = beta_binomial_cs(x, n, alpha)
    for end, free in ((low, 0.0), (high, 1.0)):
        if end != free:
            assert _log_martingale(end, x, n) == pytest.approx(math.log(1 / alpha), abs=1e-6)


@given(counts(), st.sampled_from([0.01, 0.05, 0.2]))
def test_contains_phat_and_is_wider_than_clopper_pearson(xn: tuple[int, int], alpha: float) -> None:
    """Fails if the sequence were a fixed-n interval (narrower than CP) or missed p̂."""
    x, n = xn
    low, high = beta_binomial_cs(x, n, alpha)
    cp_low, cp_high = clopper_pearson(x, n, alpha)
    assert low <= x / n <= high
    assert low <= cp_low + 1e-9 and high >= cp_high - 1e-9


@given(counts(max_n=200))
def test_bounds_rise_with_the_event_count(xn: tuple[int, int]) -> None:
    """Fails if a bound were not monotone in x (the identified range relies on it)."""
    x, n = xn
    if x < n:
        here, above = beta_binomial_cs(x, n), beta_binomial_cs(x + 1, n)
        assert above[0] >= here[0] and above[1] >= here[1]


@given(st.lists(st.booleans(), min_size=1, max_size=120))
@settings(max_examples=60)
def test_running_intersection_is_nested_and_valid_at_each_step(stream: list[bool]) -> None:
    """Fails if the running intersection were dropped (intervals would not be nested)."""
    found = confidence_sequence(stream)
    for before, after in itertools.pairwise(found):
        assert before[0] <= after[0] <= after[1] <= before[1]
    x = 0
    for i, outcome in enumerate(stream):
        x += outcome
        low, high = beta_binomial_cs(x, i + 1)
        assert found[i][0] >= low and found[i][1] <= high


def test_no_data_says_nothing() -> None:
    """Fails if n = 0 raised or claimed information."""
    assert beta_binomial_cs(0, 0) == (0.0, 1.0)


def test_closed_form_at_one_trial() -> None:
    """Fails if the mixture constant were wrong: at n = 1, x = 0 the upper end is 1 − alpha/2.

    M_1(p) = B(1/2, 3/2) / B(1/2, 1/2) / (1 − p) = (1/2) / (1 − p), which reaches 1/alpha
    at p = 1 − alpha/2.
    """
    assert beta_binomial_cs(0, 1, ALPHA) == (0.0, pytest.approx(1 - ALPHA / 2, abs=1e-12))


HORIZON = 200


@pytest.fixture(scope="module")
def cs_table() -> dict[tuple[int, int], tuple[float, float]]:
    """Every (x, n) interval up to the horizon, computed once for all simulations."""
    return {(x, n): beta_binomial_cs(x, n) for n in range(1, HORIZON + 1) for x in range(n + 1)}


@pytest.mark.parametrize("p", [0.05, 0.2, 0.5])
def test_the_whole_sequence_misses_p_at_most_alpha_of_the_time(
    p: float, cs_table: dict[tuple[int, int], tuple[float, float]]
) -> None:
    """Checked after every event of 1,000 seeded streams of 200 events: a stream counts as
    a miss if the interval excludes p at ANY look. Fails with a fixed-n interval (CP
    re-checked after each event misses far more than alpha)."""
    horizon, streams, table = HORIZON, 1000, cs_table
    rng = np.random.default_rng(int(p * 1000) + 12)
    cumulative = np.cumsum(rng.random((streams, horizon)) < p, axis=1)
    missed = 0
    for row in cumulative:
        missed += any(
            not table[(int(x), n)][0] <= p <= table[(int(x), n)][1]
            for n, x in enumerate(row, start=1)
        )
    assert missed / streams <= ALPHA


def test_rechecked_clopper_pearson_does_miss_more_than_alpha() -> None:
    """The control for the test above: the same looks with CP do inflate the miss rate,
    so that test can tell a confidence sequence from a fixed-n interval."""
    horizon, streams, p = 200, 400, 0.2
    table = {(x, n): clopper_pearson(x, n) for n in range(1, horizon + 1) for x in range(n + 1)}
    rng = np.random.default_rng(7)
    cumulative = np.cumsum(rng.random((streams, horizon)) < p, axis=1)
    missed = sum(
        any(not table[(int(x), n)][0] <= p <= table[(int(x), n)][1] for n, x in enumerate(r, 1))
        for r in cumulative
    )
    assert missed / streams > 2 * ALPHA


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_identified_range_brackets_every_completion(nh: tuple[int, int]) -> None:
    """Fails if ci_low came from the upper series or ci_high from the lower one."""
    n, observed_harm = nh
    unobserved = (n - observed_harm) // 2
    found = identified_range(observed_harm, unobserved, n)
    assert found.lower == observed_harm / n
    assert found.upper == (observed_harm + unobserved) / n
    assert found.ci_low == beta_binomial_cs(observed_harm, n)[0]
    assert found.ci_high == beta_binomial_cs(observed_harm + unobserved, n)[1]
    for true_harm in range(observed_harm, observed_harm + unobserved + 1):
        low, high = beta_binomial_cs(true_harm, n)
        assert found.ci_low <= low and high <= found.ci_high


def test_identified_range_refuses_impossible_counts() -> None:
    """Fails if more harms and unobserved events than events were accepted."""
    with pytest.raises(ValueError, match="`unobserved` must be in"):
        identified_range(3, 3, 5)


@given(counts(max_n=300), st.floats(0.001, 0.999))
def test_membership_matches_scipy_betabinom_over_binom(xn: tuple[int, int], p: float) -> None:
    """Differential against scipy: the mixture martingale is the beta-binomial pmf over the
    binomial pmf (the binomial coefficients cancel), so p is inside the interval exactly
    when that ratio is below 1/alpha. Fails if the prior, the level or a root were off."""
    from scipy import stats

    x, n = xn
    low, high = beta_binomial_cs(x, n)
    if min(abs(p - low), abs(p - high)) < 1e-7:
        return  # too close to an end for floating point to decide
    ratio = stats.betabinom.logpmf(x, n, 0.5, 0.5) - stats.binom.logpmf(x, n, p)
    assert (low < p < high) == (ratio < math.log(1 / ALPHA))
