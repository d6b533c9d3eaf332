from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kaudit.agents import AgentDefaults, Episode, Observation, Turn
from kaudit.agents.chat import ChatAgent, load_model_config, model_agent
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.cli.main import app
from kaudit.errors import KauditError, SpecError
from kaudit.harness import CampaignPlan, RunJob, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.ledger import Ledger
from kaudit.suites import Suite
from tests.conftest import FIXTURES

EXAMPLE = """\
provider: openai
name: oracle
label: oracle-on-test-server
base_url: {url}
api_key_env: KAUDIT_TEST_KEY
temperature: 0.2
max_tokens: 256
price: {{input: 0.5, output: 1.5}}
max_concurrent_runs: 2
extra_body: {{api_token: s3cret}}
notes: stdlib test server, no GPU
"""


def test_a_config_file_loads_and_its_description_hides_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(EXAMPLE.format(url="https://user:pw@example.test/v1"))
    config = load_model_config(path)
    assert (config.key, config.temperature, config.price.output) == (
        "oracle-on-test-server",
        0.2,
        1.5,
    )
    described = json.dumps(config.describe())
    assert "s3cret" not in described and "pw@" not in described
    assert config.describe()["api_key_env"] == "KAUDIT_TEST_KEY"
    with pytest.raises(KauditError, match="KAUDIT_TEST_KEY is not set"):
        config.api_key()
    monkeypatch.setenv("KAUDIT_TEST_KEY", "k")
    assert config.api_key() == "k"


def test_a_bad_config_field_is_named_with_its_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("provider: openai\nname: x\ntemprature: 0.3\n")
    with pytest.raises(SpecError, match=r"bad\.yaml: temprature: Extra inputs"):
        load_model_config(path)


def test_short_specs_take_command_line_overrides() -> None:
    agent = model_agent("anthropic:claude-x", temperature=0.0, base_url=None)
    assert (agent.name, agent.config.temperature, agent.config.provider) == (
        "anthropic:claude-x",
        0.0,
        "anthropic",
    )
    assert model_agent("openai:m").config.temperature == 0.6
    with pytest.raises(KauditError, match="needs a model name"):
        model_agent("openai:")


def test_kaudit_run_with_model_and_base_url_works_end_to_end(
    server: ChatTestServer, tmp_path: Path
) -> None:
    ledger = str(tmp_path / "audit.sqlite")
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--ledger", ledger, "--k", "4"]
    args += ["--model", "openai:mixture", "--base-url", server.openai_url, "--seed", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "4 runs recorded (0 already in the ledger, 0 restarted, 0 invalid" in result.output
    assert "model cost $" in result.output
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default")
    assert len(records) == 4 and {r.model for r in records} == {"openai:mixture"}
    assert manifest is not None
    assert manifest["agents"]["openai:mixture"]["sampling"]["temperature"] == 0.6
    assert manifest["stopping_rule"]["kind"] == "fixed"
    assert manifest["executor"]["kind"] == "local"
    assert manifest["ended_at"] >= manifest["started_at"]


def test_kaudit_run_reads_a_model_config_file(
    server: ChatTestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAUDIT_TEST_KEY", "not-a-real-key")
    config = tmp_path / "oracle.yaml"
    config.write_text(EXAMPLE.format(url=server.openai_url))
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--ledger", str(ledger), "--k", "2"]
    result = CliRunner().invoke(app, [*args, "--model", str(config)])
    assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default")
    assert [(r.model, r.outcome) for r in records] == [("oracle-on-test-server", "PASS")] * 2
    assert records[0].extra["sampling"]["temperature"] == 0.2
    assert manifest is not None
    assert manifest["agents"]["oracle-on-test-server"]["extra_body"] == {"api_token": "<redacted>"}
    assert manifest["executor"]["model_caps"] == {"oracle-on-test-server": 2}


class Counting(AgentDefaults):
    """An agent whose runs wait on an event so in-flight runs can be counted."""

    simulated = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.active = 0
        self.peak = 0

    def start(self, episode: Episode) -> Counting:
        return self

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        self.active += 1
        self.peak = max(self.peak, self.active)
        for _ in range(5):
            await asyncio.sleep(0)
        self.active -= 1
        return Turn(content="REFUSAL: no")

    async def aclose(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "counting"}


def test_a_model_cap_bounds_that_models_runs_without_holding_back_others(
    mini_suite: Suite, tmp_path: Path
) -> None:
    capped, free = Counting("capped"), Counting("free")
    stopped: list[RunJob] = []
    with Ledger(tmp_path / "l.sqlite") as ledger:
        asyncio.run(
            run_campaign(
                CampaignPlan("c", k=12),
                mini_suite,
                [capped, free],
                ledger,
                executor=LocalExecutor(10, {"capped": 2}),
                on_stop=stopped.append,
            )
        )
        assert len(list(ledger.records())) == 24
    assert capped.peak == 2 and free.peak > 2 and stopped == []


def test_a_chat_agent_pickles_without_its_clients() -> None:
    import pickle

    agent = model_agent("openai:m", base_url="http://127.0.0.1:9/v1")
    clone = pickle.loads(pickle.dumps(agent))
    assert isinstance(clone, ChatAgent) and clone.config == agent.config


def test_extra_body_may_not_replace_the_runs_history(tmp_path: Path) -> None:
    """Fails if `extra_body: {messages: ...}` is accepted (tried: without the validator):
    every request would then carry a second, fixed history beside the run's own."""
    path = tmp_path / "model.yaml"
    path.write_text("provider: openai\nname: x\nextra_body: {messages: []}\n")
    with pytest.raises(SpecError, match=r"model\.yaml: extra_body: .*'messages'"):
        load_model_config(path)
    path.write_text("provider: openai\nname: x\nhttp_backend: httpx\n")
    assert load_model_config(path).http_backend == "httpx"
