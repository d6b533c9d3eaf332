"""The difference test behind `mirage`: its level, its p-values and its evidence, exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from kaudit.monitor._difference import (
    ALTERNATIVES,
    THETA,
    MirageTest,
    audit_p_values,
    calibrated_level,
)
from kaudit.monitor._power import _upper_hull
from kaudit.stats import log_evidence_below

ALPHA = 0.05 / 24


def fine_error(n: int, c: float, points: int = 20001) -> float:
    """max over a fine grid of p of E_p[min(1, (c / F_p(X))^(1/θ))], by scipy.stats.binom."""
    x = np.arange(n + 1)
    worst = 0.0
    for p in np.linspace(0.0, 1.0, points):
        cdf = binom.cdf(x, n, p)
        with np.errstate(divide="ignore", over="ignore"):
            needed = np.minimum(1.0, (c / cdf) ** (1 / THETA))
        worst = max(worst, float(np.sum(binom.pmf(x, n, p) * needed)))
    return worst


@pytest.mark.parametrize("n", [8, 60])
def test_the_calibrated_level_holds_the_error_and_is_nearly_tight(n: int) -> None:
    """At c the error E_p[φ⁻¹(P_a)] stays under alpha at 20,001 rates p (scipy's binomial,
    not the library's): 0.946·alpha at its worst; at 1.15·c it exceeds alpha somewhere (the
    grid's brackets keep c within ~8% of the tightest level). Fails if the calibration
    bounded the wrong tail, or left most of the level unspent (the generic (1 − θ)·alpha)."""
    c = calibrated_level(n, ALPHA)
    assert c > (1 - THETA) * ALPHA * 1.2
    assert fine_error(n, c) <= ALPHA
    assert fine_error(n, 1.15 * c) > ALPHA


def test_a_large_audit_uses_the_level_any_p_value_allows() -> None:
    """Fails if an audit too large to calibrate got an uncalibrated level above (1−θ)·alpha."""
    assert calibrated_level(5000, ALPHA) == pytest.approx((1 - THETA) * ALPHA)


def test_the_audit_p_value_is_the_binomial_tail_or_the_anytime_one() -> None:
    """Fails if the fixed-k p-value were P(X < x) or P(X >= x), or a stopped audit's exact."""
    rates = np.array([0.05, 0.1, 0.2, 0.4])
    assert audit_p_values(6, 60, rates, False) == pytest.approx(binom.cdf(6, 60, rates))
    anytime = [min(1.0, math.exp(-log_evidence_below(6, 60, float(p)))) for p in rates]
    assert audit_p_values(6, 60, rates, True) == pytest.approx(anytime)


@settings(max_examples=60, deadline=None)
@given(harm=st.integers(0, 300), events=st.integers(1, 300), null=st.floats(0.001, 0.9))
def test_the_evidence_is_the_weighted_likelihood_ratio(harm: int, events: int, null: float) -> None:
    """Fails if an alternative's rate, weight or the likelihood ratio's clean-event factor
    were wrong: checked against the mixture written out term by term."""
    harm = min(harm, events)
    test = MirageTest(np.array([null]), np.zeros(1), 0.001, True)
    expected = 0.0
    for ratio, weight in ALTERNATIVES:
        q = min(ratio * null, (1 + null) / 2)
        log_ratio = harm * math.log(q / null) + (events - harm) * math.log((1 - q) / (1 - null))
        expected += weight * math.exp(min(log_ratio, 700))
    if expected < math.exp(690):
        assert test.log_evidence(harm, events)[0] == pytest.approx(math.log(expected), rel=1e-9)


def test_the_needed_evidence_falls_with_the_null_and_a_clean_audit_allows_less() -> None:
    """Fails if the audit p-value were taken at the upper end of a grid interval (the
    test would be anti-conservative) or if a stopped or all-damage audit were mishandled."""
    test = MirageTest.for_audit(6, 60, ALPHA)
    c = test.level
    edges = np.concatenate([[0.0], test.nulls])
    expected = np.maximum(0.0, (np.log(binom.cdf(6, 60, edges[:-1])) - math.log(c)) / THETA)
    assert test.needed == pytest.approx(expected)
    assert np.all(np.diff(test.needed) <= 1e-12)
    assert test.nulls[-1] == pytest.approx(_root(6, 60, c), abs=1e-9)
    assert MirageTest.for_audit(0, 60, ALPHA).nulls[-1] < test.nulls[-1]
    stopped = MirageTest.for_audit(6, 60, ALPHA, anytime=True)
    assert stopped.level == pytest.approx((1 - THETA) * ALPHA)
    assert not MirageTest.for_audit(60, 60, ALPHA).possible


def _root(x: int, n: int, c: float) -> float:
    """The rate where P(Binomial(n, p) <= x) = c, by bisection on scipy's cdf."""
    low, high = x / n, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if binom.cdf(x, n, mid) > c else (low, mid)
    return (low + high) / 2


@settings(max_examples=80, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=120), st.floats(0.01, 0.5))
def test_the_running_maximum_is_reached_on_the_upper_hull(stream: list[bool], null: float) -> None:
    """The simulation evaluates the evidence only at the upper hull of the harm points;
    the maximum over every harm point is the same. Fails if the hull dropped a vertex."""
    times = np.flatnonzero(np.array(stream)) + 1
    if times.size == 0:
        return
    test = MirageTest(np.array([null]), np.zeros(1), 0.001, True)
    every = test.log_evidence(np.arange(1, times.size + 1), times).max()
    hull = np.array(_upper_hull(times))
    assert test.log_evidence(hull[:, 1], hull[:, 0]).max() == pytest.approx(every, abs=1e-12)
