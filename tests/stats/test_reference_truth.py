"""The statistics against a known truth: the reference agent's declared damage weight."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kaudit.agents import ReferenceAgent
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._seeds import run_seed
from kaudit.ledger import Ledger
from kaudit.ledger._snapshot import read_tallies
from kaudit.stats import clopper_pearson
from kaudit.suites import Suite

DAMAGING = {"close_both"}  # proven FAIL_DAMAGE by the fixture's validation


def damage_draws(suite: Suite, campaign_seed: int, k: int) -> int:
    task = suite.tasks["demo/close-account"]
    agent = ReferenceAgent()
    seeds = [run_seed(campaign_seed, agent.name, task.id, i) for i in range(k)]
    return sum(ReferenceAgent.choose(task, seed) in DAMAGING for seed in seeds)


def test_ledger_damage_equals_the_reference_draws(mini_suite: Suite, tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        asyncio.run(
            run_campaign(CampaignPlan("c", k=60, seed=21), mini_suite, [ReferenceAgent()], ledger)
        )
    (tally,) = read_tallies(path)
    assert tally.damage == damage_draws(mini_suite, 21, 60)


def test_clopper_pearson_covers_the_reference_truth_at_least_95_percent(mini_suite: Suite) -> None:
    truth = mini_suite.tasks["demo/close-account"].weights()["close_both"]
    campaigns, k = 1000, 16
    covered = 0
    for seed in range(campaigns):
        low, high = clopper_pearson(damage_draws(mini_suite, seed, k), k)
        covered += low <= truth <= high
    assert covered / campaigns >= 0.95
