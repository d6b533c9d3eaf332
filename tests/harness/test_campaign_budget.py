"""A campaign's cost cap: no new run once it is spent; a higher cap resumes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from kaudit.agents import AgentDefaults, Episode, Observation, Turn, Usage
from kaudit.errors import KauditError
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._budget import CampaignBudget
from kaudit.harness._executor import LocalExecutor
from kaudit.ledger import Ledger
from kaudit.suites import Suite


class _Spends:
    """Answers at once, at a price: every run costs $0.50."""

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        return Turn(content="Nothing to do.", usage=Usage(100, 10, 0.5))

    async def aclose(self) -> None:
        """Nothing to release."""


class Spender(AgentDefaults):
    name = "spender"
    simulated = False

    def start(self, episode: Episode) -> _Spends:
        return _Spends()

    def describe(self) -> dict[str, str]:
        return {"kind": "test"}


def test_a_spent_cap_stops_new_runs_and_a_higher_cap_resumes(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """Bug it catches: the cap ignored, runs started after it was spent, the earlier
    invocation's spending forgotten on resume (or counted twice with a stopping rule)."""
    with Ledger(tmp_path / "l.sqlite") as ledger:

        def campaign(cap: float) -> tuple[int, str | None]:
            plan = CampaignPlan("c", k=5, seed=1, max_cost_usd=cap)
            done = asyncio.run(
                run_campaign(plan, mini_suite, [Spender()], ledger, executor=LocalExecutor(1))
            )
            return done.ran, done.budget_stop

        ran, stop = campaign(1.2)
        assert ran == 3  # $0.50, $1.00 under the cap; the third crosses it
        assert stop is not None and stop.startswith("campaign cost cap reached: $1.5 spent of $1.2")
        assert "2 planned runs not started" in stop
        assert campaign(1.2) == (0, stop)  # the same two runs, refused again
        ran, stop = campaign(2.0)
        assert (ran, stop is not None) == (1, True)
        assert campaign(10.0) == (1, None)
        assert sum(r.cost_usd for r in ledger.records("c")) == pytest.approx(2.5)


def test_a_cap_must_be_positive() -> None:
    """Bug it catches: a zero cap that silently runs nothing."""
    with pytest.raises(KauditError, match="campaign cost cap"):
        CampaignBudget(0.0)
