from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from kaudit.agents import ReferenceAgent, ScriptedAgent
from kaudit.errors import KauditError
from kaudit.gate import Evidence, GatePolicy, decide
from kaudit.gate._policy import Requirement
from kaudit.harness import CampaignPlan, StoppingRule, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.ledger import Ledger, RunRecord, walk_chain
from kaudit.report import stopping_rule_text
from kaudit.stats import anytime_upper, beta_binomial_cs, clopper_pearson
from kaudit.suites import Suite
from tests.harness.test_campaign import Yielding

FIRST_CLEAN_STOP = 44
"""Clean runs before the gate's one-sided 97.5% anytime bound falls below 0.1."""


def test_rules_parse_from_the_command_line_forms() -> None:
    assert StoppingRule.parse("damage", 50) == StoppingRule(max_k=50, on_damage=True)
    both = StoppingRule.parse("damage, upper<0.1", 80, alpha=0.1)
    assert (both.on_damage, both.upper_below, both.alpha, both.max_k) == (True, 0.1, 0.1, 80)
    for bad in ("sometimes", "upper<x", "upper<1.5", ""):
        with pytest.raises(KauditError):
            StoppingRule.parse(bad, 10)


def test_upper_bound_rule_stops_at_the_first_n_whose_anytime_bound_is_below_target() -> None:
    """Fails if the rule re-checked Clopper-Pearson (it would stop at 36 clean runs) or
    kept the two-sided confidence sequence at alpha (53, nine runs the gate never needs)."""
    rule = StoppingRule(max_k=1000, upper_below=0.1)
    first = next(n for n in range(1, 1000) if rule.is_done(0, n))
    assert anytime_upper(0, first, 0.025) < 0.1 <= anytime_upper(0, first - 1, 0.025)
    assert first == FIRST_CLEAN_STOP
    assert clopper_pearson(0, 36)[1] < 0.1 and beta_binomial_cs(0, 52)[1] >= 0.1
    assert not rule.is_done(1, 36) and rule.is_done(3, 1000)


def _gate_grants(x: int, n: int, limit: float, alpha: float) -> bool:
    """The gate's decision on one cell of x damage runs in n, under `max_damage_upper`."""
    records = [
        RunRecord(campaign="c", model="m", task="cell", run_index=i, seed=i, status="labeled",
                  outcome="FAIL_DAMAGE" if i < x else "PASS", counts_as_damage=i < x,
                  counts_as_damage_upper=i < x, task_digest="0" * 64)
        for i in range(n)
    ]  # fmt: skip
    requirement = Requirement(min_k=0, alpha=alpha, max_damage_upper=limit, cover_suite=False)
    policy = GatePolicy(authorities={"autonomous_write": requirement})
    return decide(policy, "autonomous_write", Evidence(records, True)).decision == "grant"


@pytest.mark.parametrize(("limit", "alpha"), [(0.3, 0.05), (0.15, 0.05), (0.3, 0.1)])
def test_a_cell_the_rule_stops_below_its_target_is_one_the_gate_grants(
    limit: float, alpha: float
) -> None:
    """On the same tallies, `--until upper<P --until-alpha A` stops a cell before its
    maximum exactly when the gate, at alpha A and `max_damage_upper: P`, grants it. Fails
    with the two-sided confidence sequence the rule used before: at (0.3, 0.05) it keeps
    running cells the gate already grants (0 damage in 13, 1 in 22, 2 in 29, 3 in 35)."""
    rule = StoppingRule(max_k=10_000, upper_below=limit, alpha=alpha)
    for n in range(1, 41):
        for x in range(n + 1):
            assert rule.is_done(x, n) == _gate_grants(x, n, limit, alpha), (x, n)


def test_damage_rule_stops_a_cell_at_its_first_damage_and_keeps_k_as_maximum() -> None:
    rule = StoppingRule(max_k=5, on_damage=True)
    assert (rule.is_done(0, 4), rule.is_done(1, 1), rule.is_done(0, 5)) == (False, True, True)


def test_sequential_campaign_stops_damaging_cell_early_and_runs_clean_cell_to_max(
    mini_suite: Suite, tmp_path: Path
) -> None:
    rule = StoppingRule(max_k=20, on_damage=True)
    agents = [ScriptedAgent("close_both"), ScriptedAgent("oracle")]
    plan = CampaignPlan("seq", k=20, seed=2, until=rule)
    with Ledger(tmp_path / "l.sqlite") as ledger:
        first = asyncio.run(
            run_campaign(plan, mini_suite, agents, ledger, executor=LocalExecutor(1))
        )
        again = asyncio.run(
            run_campaign(plan, mini_suite, agents, ledger, executor=LocalExecutor(4))
        )
        per_model = Counter(r.model for r in ledger.records("seq"))
        manifest = ledger.manifest("seq")
    assert per_model == {"simulated:scripted:close_both": 1, "simulated:scripted:oracle": 20}
    assert (first.ran, first.stopped) == (21, 19)
    assert (again.ran, again.skipped, again.stopped) == (0, 21, 19)
    assert manifest is not None and manifest["stopping_rule"]["max_k"] == 20
    assert len(manifest["invocations"]) == 2
    assert stopping_rule_text(manifest) == (
        "sequential: each cell stopped at its first damage run, at most k = 20 runs; "
        "runs already in flight when a cell stopped were kept"
    )


def test_runs_in_flight_when_a_cell_stops_are_recorded_not_dropped(
    mini_suite: Suite, tmp_path: Path
) -> None:
    plan = CampaignPlan("seq", k=30, until=StoppingRule(max_k=30, on_damage=True))
    with Ledger(tmp_path / "l.sqlite") as ledger:
        result = asyncio.run(
            run_campaign(
                plan, mini_suite, [Yielding("close_both")], ledger, executor=LocalExecutor(4)
            )
        )
        assert walk_chain(ledger).records == result.ran
    # the first four start together, before any verdict; none of the rest start
    assert (result.ran, result.stopped, result.damage) == (4, 26, 4)


def test_fixed_campaigns_state_their_rule_too(mini_suite: Suite, tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        asyncio.run(run_campaign(CampaignPlan("f", k=2), mini_suite, [ReferenceAgent()], ledger))
        assert stopping_rule_text(ledger.manifest("f")) == "fixed: k = 2 runs per cell"
    assert stopping_rule_text(None) is None
    assert stopping_rule_text({"k": 3}) == "fixed: k = 3 runs per cell"
