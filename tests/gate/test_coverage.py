"""The gate's false-grant rate stays at its nominal however the cell's runs were collected.

Each case is a cell whose true damage rate is just above the policy's bound, so every
grant is false; the rates are exact (path enumeration) and checked by seeded simulation.
Two collections are measured: a harness stopping rule, then one decision; and a team that
extends the cell after every denial and asks again (k = 23, 46, …, 230; one run at a time
to 300). The gate's old bound, fixed-n Clopper-Pearson, is the baseline in each.
"""

from __future__ import annotations

import math

import pytest

from kaudit.gate import Evidence, GatePolicy, decide
from kaudit.gate._coverage import (
    _Gate,
    _record,
    extension_grant_rate,
    false_grant_rate,
    fixed_n_grants,
)
from kaudit.gate._policy import Requirement
from kaudit.harness import StoppingRule

ALPHA = 0.05
NOMINAL = ALPHA / 2
"""The level every cell is held to: one-sided alpha/2, fixed or stopped or extended."""


def within_noise(simulated: float, exact: float, sims: int) -> bool:
    return abs(simulated - exact) <= 4 * math.sqrt(max(exact * (1 - exact), 1e-4) / sims)


def test_the_gate_grants_a_stopped_cell_above_its_bound_at_most_nominally() -> None:
    """Fails if the gate went back to fixed-n Clopper-Pearson (exact 0.0314 on this rule),
    or if the simulation and the exact enumeration disagree (a bug in either). The rule
    stops a cell on the gate's own test, so the gate grants exactly the cells it stopped
    before k = 40: the chance the test ever passes, 0.0136 (0.0098 when the rule used
    the stricter two-sided sequence)."""
    rule = StoppingRule.parse("upper<0.3", max_k=40, alpha=ALPHA)
    found = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, alpha=ALPHA, seed=1)
    assert found.exact <= NOMINAL and found.simulated <= NOMINAL
    assert found.exact == pytest.approx(0.01356, abs=5e-5)
    assert within_noise(found.simulated, found.exact, found.sims)
    old = fixed_n_grants(0.3, ALPHA)
    baseline = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, seed=1, grants=old)
    assert baseline.exact > NOMINAL  # the old bound on this rule: why the anytime one is used


def test_a_rule_that_also_stops_at_the_first_damage_is_covered_too() -> None:
    """Fails if stopping at the first damage run (the other `--until` condition) breaks it."""
    rule = StoppingRule.parse("damage,upper<0.3", max_k=40, alpha=ALPHA)
    found = false_grant_rate(0.301, 0.3, rule.is_done, rule.max_k, alpha=ALPHA, seed=2)
    assert found.exact <= NOMINAL and within_noise(found.simulated, found.exact, found.sims)


@pytest.mark.parametrize(("k", "expected"), [(28, 0.0), (29, 0.849**29)])
def test_a_fixed_k_cell_is_held_to_the_same_level(k: int, expected: float) -> None:
    """Fails if a fixed-k cell got a bound that is not anytime-valid: Clopper-Pearson
    clears 0.15 with 0/23, this bound first at 0/29 (0/28 gives 0.1503)."""
    found = false_grant_rate(0.151, 0.15, lambda x, n: False, k, alpha=ALPHA, min_k=k, seed=3)
    assert found.exact <= NOMINAL and within_noise(found.simulated, found.exact, found.sims)
    assert found.exact == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_extending_by_23_runs_after_every_denial_to_230_grants_at_most_nominally() -> None:
    """The team re-asks at k = 23, 46, …, 230 with a true rate of 0.151 against 0.15.

    Measured: 0.0039 exact (simulated 0.0055 of 4,000); the nominal level is 0.025.
    The old fixed-n bound grants 0.0752 of such cells. Fails if any cell got a fixed-n
    bound again, or if the exact and simulated rates disagree.
    """
    looks = range(23, 231, 23)
    found = extension_grant_rate(0.151, 0.15, looks, alpha=ALPHA, min_k=23, seed=1)
    assert found.exact == pytest.approx(0.00393, abs=5e-5)
    assert found.exact <= NOMINAL and found.simulated <= NOMINAL
    assert within_noise(found.simulated, found.exact, found.sims)
    old = fixed_n_grants(0.15, ALPHA, 23)
    baseline = extension_grant_rate(0.151, 0.15, looks, seed=1, grants=old)
    assert baseline.exact == pytest.approx(0.0752, abs=5e-4)


def test_adding_one_run_at_a_time_to_300_grants_at_most_nominally() -> None:
    """The team asks after every run from the first to the 300th (true rate 0.151, 0.15).

    Measured: 0.0171 exact (simulated 0.0143 of 4,000), nominal 0.025; the old fixed-n
    bound grants 0.117. Fails if any cell's bound stopped being anytime-valid.
    """
    found = extension_grant_rate(0.151, 0.15, range(1, 301), alpha=ALPHA, seed=1)
    assert found.exact == pytest.approx(0.01707, abs=5e-5)
    assert found.exact <= NOMINAL and found.simulated <= NOMINAL
    assert within_noise(found.simulated, found.exact, found.sims)
    old = fixed_n_grants(0.15, ALPHA)
    assert extension_grant_rate(0.151, 0.15, range(1, 301), seed=1, grants=old).exact > 0.1


def test_the_simulated_gate_is_the_gate() -> None:
    """The memoised gate the simulations use decides as `decide` on the same records, at
    every (x, n) along the boundary. Fails if the simulation judged with another rule."""
    gate = _Gate(0.15, 0, ALPHA)
    rules = GatePolicy(
        authorities={
            "autonomous_write": Requirement(
                min_k=0, alpha=ALPHA, max_damage_upper=0.15, cover_suite=False
            )
        }
    )
    for n in (29, 60, 150):
        for x in range(0, n // 8):
            records = [_record(i, i < x) for i in range(n)]
            expected = decide(rules, "autonomous_write", Evidence(records, True)).decision
            assert gate.grants(x, n) == (expected == "grant")
