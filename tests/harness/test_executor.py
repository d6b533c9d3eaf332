"""The local executor's heap handling: frozen for a campaign, collected again after it."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from pathlib import Path

from kaudit.agents import Episode, Observation, ScriptedAgent, Turn
from kaudit.agents._scripted import ScriptSession
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.ledger import Ledger
from kaudit.suites import Suite


class FreezeWatcher(ScriptedAgent):
    """Replays the oracle and notes how many objects the collector has set aside."""

    def __init__(self) -> None:
        super().__init__("oracle")
        self.frozen: list[int] = []

    def start(self, episode: Episode) -> ScriptSession:
        session = super().start(episode)
        replay = session.next_turn

        async def next_turn(observations: Sequence[Observation]) -> Turn:
            self.frozen.append(gc.get_freeze_count())
            return await replay(observations)

        session.next_turn = next_turn  # type: ignore[method-assign]
        return session


def test_the_start_of_campaign_heap_is_frozen_during_runs_and_collected_after(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """Fails if the heap is not frozen while runs execute (tried: `frozen_heap` as a no-op)
    or stays frozen after the campaign (tried: without `gc.unfreeze`), which would keep
    every cycle that existed at the start from ever being collected."""
    before = gc.get_freeze_count()
    agent = FreezeWatcher()
    with Ledger(tmp_path / "l.sqlite") as ledger:
        result = asyncio.run(
            run_campaign(
                CampaignPlan("gc", k=4), mini_suite, [agent], ledger, executor=LocalExecutor(2)
            )
        )
    assert result.ran == 4
    assert min(agent.frozen) > 1000  # the modules, the suite, the agent: all set aside
    assert gc.get_freeze_count() == before == 0


def test_a_heap_the_caller_froze_stays_frozen_after_a_campaign(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """Fails if the campaign's unfreeze also releases the caller's own freeze (tried:
    freezing and unfreezing unconditionally)."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with Ledger(tmp_path / "l.sqlite") as ledger:
            asyncio.run(
                run_campaign(CampaignPlan("gc", k=2), mini_suite, [FreezeWatcher()], ledger)
            )
        # still frozen (a few frozen objects may be freed meanwhile by reference counting)
        assert gc.get_freeze_count() > 0.9 * frozen > 0
    finally:
        gc.unfreeze()
