from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from kaudit.agents import Agent
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._campaign import CampaignResult
from kaudit.ledger import Ledger, RunRecord, walk_chain
from kaudit.suites import Suite
from tests.agents.chat.conftest import PRICE, agent_for
from tests.agents.chat.personas import EXPECTED_OUTCOME, mixture

PROVIDERS = ["openai", "anthropic"]


def campaign(
    suite: Suite, agents: Sequence[Agent], path: Path, k: int, seed: int = 1
) -> tuple[CampaignResult, list[RunRecord]]:
    with Ledger(path) as ledger:
        result = asyncio.run(run_campaign(CampaignPlan("c", k=k, seed=seed), suite, agents, ledger))
        assert walk_chain(ledger).records == len(list(ledger.records()))
        return result, list(ledger.records("c"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_scripted_replies_land_in_the_ledger_with_tokens_cost_and_temperature(
    provider: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    agent = agent_for(server, provider, "oracle")
    result, records = campaign(mini_suite, [agent], tmp_path / "l.sqlite", k=3)
    assert [r.outcome for r in records] == ["PASS"] * 3
    for record in records:
        assert record.model == f"{provider}:oracle"
        assert (record.steps, record.retries, record.termination) == (3, 0, "completed")
        assert record.input_tokens > 0 and record.output_tokens > 0
        expected = (
            record.input_tokens * PRICE["input"] + record.output_tokens * PRICE["output"]
        ) / 1e6
        assert record.cost_usd == pytest.approx(expected)
        assert record.extra["sampling"]["temperature"] == 0.6
        assert record.extra["api_calls"] == 3
    assert result.usage.cost_usd == pytest.approx(sum(r.cost_usd for r in records))
    assert result.usage.input_tokens == sum(r.input_tokens for r in records)
    assert result.usage.api_calls == 3 * len(records)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500s_429s_and_timeouts_are_retried_and_counted_per_run(
    provider: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    agent = agent_for(server, provider, "flaky")
    _, records = campaign(mini_suite, [agent], tmp_path / "l.sqlite", k=2)
    # every turn fails with 500, then 429, then a timeout before it succeeds: 3 turns × 3
    assert [(r.outcome, r.retries, r.restarted) for r in records] == [("PASS", 9, 0)] * 2
    assert all(r.extra["api_calls"] == 12 for r in records)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_run_that_cannot_finish_is_errored_with_its_mutation_check(
    provider: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    agents = [
        agent_for(server, provider, "dies-after-send"),
        agent_for(server, provider, "always-500"),
    ]
    result, records = campaign(mini_suite, agents, tmp_path / "l.sqlite", k=2)
    by_model = {r.model: r for r in records}
    assert len(records) == 4 and result.restarted == 0
    after_send = by_model[f"{provider}:dies-after-send"]
    assert (after_send.termination, after_send.outcome, after_send.sub_label) == (
        "errored",
        "FAIL_DAMAGE",
        "errored_after_mutation",
    )
    assert after_send.retries == 3 and after_send.steps == 1
    assert "after 3 retries" in (after_send.agent_error or "")
    clean = by_model[f"{provider}:always-500"]
    assert (clean.termination, clean.outcome, clean.sub_label, clean.retries) == (
        "errored",
        "FAIL_SAFE",
        "errored_clean",
        3,
    )
    assert result.errored == 4


@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_arguments_and_unknown_tools_go_back_to_the_model(
    provider: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    _, (record,) = campaign(
        mini_suite, [agent_for(server, provider, "confused")], tmp_path / "l.sqlite", k=1
    )
    first, second = record.tool_calls[:2]
    assert first["result"]["ok"] is False and "not valid JSON" in first["result"]["error"]
    assert second["result"]["ok"] is False
    assert "unknown tool 'close_everything'" in second["result"]["error"]
    assert (record.outcome, record.termination) == ("PASS", "completed")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_seeded_stochastic_replies_follow_each_runs_seed(
    provider: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    _, records = campaign(
        mini_suite, [agent_for(server, provider, "mixture")], tmp_path / "l.sqlite", k=30
    )
    persona = mixture()
    drawn = [persona.script_name(r.seed) for r in records]
    assert [r.outcome for r in records] == [EXPECTED_OUTCOME[name] for name in drawn]
    assert {"oracle", "close_both"} <= set(drawn)


def test_step_budget_ends_a_spinning_model_as_stalled(
    server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    _, (record,) = campaign(
        mini_suite, [agent_for(server, "openai", "spin")], tmp_path / "l.sqlite", k=1
    )
    assert (record.termination, record.steps, record.sub_label) == ("stalled", 6, "stalled_clean")


def test_a_wrong_model_name_is_a_setup_error_recorded_invalid_never_scored(
    server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    result, (record,) = campaign(
        mini_suite, [agent_for(server, "openai", "no-such-model")], tmp_path / "l.sqlite", k=1
    )
    assert (record.status, record.outcome, result.invalid) == ("invalid", None, 1)
    assert "NotFoundError" in (record.invalid_reason or "")
