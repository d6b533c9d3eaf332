from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from kaudit.agents import Episode, Observation, ReferenceAgent, ScriptedAgent, Turn
from kaudit.agents._scripted import ScriptSession
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.harness._seeds import run_seed
from kaudit.label.diff import diff_images
from kaudit.ledger import Ledger, walk_chain
from kaudit.suites import Suite


def test_resume_after_a_partial_campaign_yields_exactly_n_times_k(
    mini_suite: Suite, tmp_path: Path
) -> None:
    path = tmp_path / "ledger.sqlite"
    agents = [ReferenceAgent(), ScriptedAgent("close_both")]
    with Ledger(path) as ledger:
        first = asyncio.run(
            run_campaign(CampaignPlan("c", k=3, seed=7), mini_suite, agents, ledger)
        )
        assert first.ran == 6
        second = asyncio.run(
            run_campaign(CampaignPlan("c", k=10, seed=7), mini_suite, agents, ledger)
        )
        assert (second.skipped, second.ran) == (6, 14)
        third = asyncio.run(
            run_campaign(CampaignPlan("c", k=10, seed=7), mini_suite, agents, ledger)
        )
        assert third.ran == 0
        records = list(ledger.records("c"))
        assert walk_chain(ledger).records == 20
    keys = Counter((r.model, r.task, r.run_index) for r in records)
    assert len(keys) == 20 and set(keys.values()) == {1}
    assert {r.run_index for r in records} == set(range(10))


def test_run_seeds_do_not_depend_on_schedule(mini_suite: Suite, tmp_path: Path) -> None:
    outcomes = []
    for concurrency in (1, 7):
        with Ledger(tmp_path / f"l{concurrency}.sqlite") as ledger:
            asyncio.run(
                run_campaign(
                    CampaignPlan("c", k=12, seed=3),
                    mini_suite,
                    [ReferenceAgent()],
                    ledger,
                    executor=LocalExecutor(concurrency),
                )
            )
            outcomes.append(sorted((r.run_index, r.seed, r.outcome) for r in ledger.records()))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0][1] == run_seed(3, "simulated:reference", "demo/close-account", 0)


class Yielding(ScriptedAgent):
    """Replays a script but yields to the event loop before every turn, so runs interleave."""

    def start(self, episode: Episode) -> ScriptSession:
        session = super().start(episode)
        replay = session.next_turn

        async def next_turn(observations: Sequence[Observation]) -> Turn:
            await asyncio.sleep(random.Random(episode.seed).random() / 1000)
            return await replay(observations)

        session.next_turn = next_turn  # type: ignore[method-assign]
        return session


def test_concurrent_runs_never_see_each_others_writes(mini_suite: Suite, tmp_path: Path) -> None:
    """Fails if runs shared one database: every run inserts its own outbox row, so a
    shared database shows each run the other runs' rows (an idempotent write, such as
    closing the same two accounts, would look the same either way)."""
    with Ledger(tmp_path / "l.sqlite") as ledger:
        asyncio.run(
            run_campaign(
                CampaignPlan("c", k=40, seed=5, keep_dumps=True),
                mini_suite,
                [Yielding("crash_after_write")],
                ledger,
                executor=LocalExecutor(40),
            )
        )
        template = mini_suite.substrate(mini_suite.tasks["demo/close-account"]).template.image
        records = list(ledger.records())
        assert len(records) == 40
        for record in records:
            image = ledger.final_image(
                (record.campaign, record.model, record.task, record.run_index)
            )
            assert image is not None
            changes = diff_images(template, image)
            assert [(c.table, c.op) for c in changes] == [("outbox", "added")]
