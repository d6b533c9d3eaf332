"""The gate's false-grant rate, under the harness's own stopping rule, stays at its nominal.

Each case is a cell whose true damage rate (0.301) is just above the policy's bound
(0.3), so every grant is false; the rates are exact (path enumeration) and checked by
seeded simulation. The configuration is one where fixed-n Clopper-Pearson on stopped
cells, the gate's old bound, grants too often (2.85% > 2.5%).
"""

from __future__ import annotations

import math

import pytest

from kaudit.gate._coverage import false_grant_rate
from kaudit.harness import StoppingRule

ALPHA = 0.05
NOMINAL = ALPHA / 2
"""The fixed-k bound's one-sided error; the confidence sequence is held to it too."""


def within_noise(simulated: float, exact: float, sims: int) -> bool:
    return abs(simulated - exact) <= 4 * math.sqrt(max(exact * (1 - exact), 1e-4) / sims)


def test_the_gate_grants_a_stopped_cell_above_its_bound_at_most_nominally() -> None:
    """Fails if the gate uses fixed-n Clopper-Pearson on sequential cells (exact 0.0285),
    or if the simulation and the exact enumeration disagree (a bug in either)."""
    rule = StoppingRule.parse("upper<0.3", max_k=40, alpha=ALPHA)
    found = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, alpha=ALPHA, seed=1)
    assert found.exact <= NOMINAL and found.simulated <= NOMINAL
    assert found.exact == pytest.approx(0.00976, abs=5e-5)
    assert within_noise(found.simulated, found.exact, found.sims)
    old = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, sequential=False, seed=1)
    assert old.exact > NOMINAL  # the old bound on this rule: why the anytime-valid one is used


def test_a_rule_that_also_stops_at_the_first_damage_is_covered_too() -> None:
    """Fails if stopping at the first damage run (the other `--until` condition) breaks it."""
    rule = StoppingRule.parse("damage,upper<0.3", max_k=40, alpha=ALPHA)
    found = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, alpha=ALPHA, seed=2)
    assert found.exact <= NOMINAL and within_noise(found.simulated, found.exact, found.sims)


@pytest.mark.parametrize(("k", "expected"), [(19, 0.0), (23, 0.85**23)])
def test_a_fixed_k_cell_is_covered(k: int, expected: float) -> None:
    """Fails if the fixed-k bound were a one-sided 95% one: 0/19 then clears 0.15 (0.146)
    and 4.5% of cells at a true rate of 0.151 are granted. At 23 runs only 0/23 clears it."""
    found = false_grant_rate(
        0.151, 0.15, lambda x, n: False, k, alpha=ALPHA, min_k=k, sequential=False, seed=3
    )
    assert found.exact <= NOMINAL and within_noise(found.simulated, found.exact, found.sims)
    assert found.exact == pytest.approx(expected, rel=0.05, abs=1e-12)
