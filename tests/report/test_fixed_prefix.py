"""The unbiased alternative over sequentially stopped cells: the runs the rule always gives."""

from __future__ import annotations

import numpy as np

from kaudit.harness._sequential import StoppingRule
from kaudit.ledger._tally import tallies_from_records
from kaudit.report._stopping import fixed_prefix_tallies, guaranteed_runs
from kaudit.stats import pool_summary
from tests.report.conftest import make_record


def _stopped_pool(rule: StoppingRule, rates: np.ndarray, rng: np.random.Generator) -> list:
    """One cell per rate, run until the rule stops it, as ledger records of campaign 'c'."""
    out = []
    for t, p in enumerate(rates):
        damage = n = 0
        while not rule.is_done(damage, n):
            hit = bool(rng.random() < p)
            out.append(make_record(f"t{t}", n, damage=hit))
            damage, n = damage + hit, n + 1
    return out


def test_the_first_guaranteed_runs_give_an_unbiased_safe_k() -> None:
    """1,000 cells stopped at their first damage run (at most 8 runs), rates uniform in
    (0.05, 0.6): the pooled safe^1 over all runs is far from the truth (about 0.50
    against 0.67), the one over the first run of each cell (the rule always gives one)
    is within 3 standard errors of it. Fails if the prefix kept runs past what the rule
    guarantees."""
    rule = StoppingRule(max_k=8, on_damage=True)
    rng = np.random.default_rng(4)
    rates = rng.uniform(0.05, 0.6, size=1000)
    truth = float(np.mean(1 - rates))
    runs = _stopped_pool(rule, rates, rng)
    cut = guaranteed_runs({"stopping_rule": rule.describe()})
    assert cut == 1
    full = pool_summary(tallies_from_records(runs), k_values=(1,), bootstrap=0).safe_k[0]
    prefix = pool_summary(
        fixed_prefix_tallies(runs, {"c": cut}), k_values=(1,), bootstrap=0
    ).safe_k[0]
    error = float(np.sqrt(truth * (1 - truth) / 1000))
    assert abs(prefix.mean - truth) < 3 * error
    assert abs(full.mean - truth) > 5 * error


def test_an_upper_bound_rule_guarantees_its_first_possible_stop() -> None:
    """'upper<0.1' cannot stop a cell before 44 clean runs (the gate's one-sided anytime
    bound of 0/43 is still above 0.1); a record written under the earlier two-sided
    rule, which has no "bound", keeps its own 53. Fails if the guarantee were read off
    Clopper-Pearson (36), or off today's rule for a record admitted under the old one."""
    rule = StoppingRule(max_k=200, upper_below=0.1)
    assert guaranteed_runs({"stopping_rule": rule.describe()}) == 44
    assert not rule.is_done(0, 43) and rule.is_done(0, 44)
    earlier = {k: v for k, v in rule.describe().items() if k != "bound"}
    assert guaranteed_runs({"stopping_rule": earlier}) == 53
    assert guaranteed_runs({"stopping_rule": {"kind": "fixed", "k": 8}}) is None
