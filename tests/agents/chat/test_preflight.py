"""The preflight refuses a stack that drops tools, rejects follow-ups or lacks a key.

These use kaudit's own test server for stacks a real one cannot be made to be on demand;
`test_real_model.py` runs the same preflight against llama.cpp's servers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kaudit.agents.chat import ChatAgent, ModelConfig, preflight_agents
from kaudit.agents.chat.testserver import Call, ChatTestServer, Persona, Reply
from kaudit.cli.main import app
from kaudit.errors import PreflightError
from kaudit.ledger import Ledger
from tests.conftest import FIXTURES

CALLER = (Reply(calls=(Call("record_probe", {"value": "ping"}),)), Reply(content="Done."))


@pytest.fixture(scope="module")
def stacks() -> Iterator[ChatTestServer]:
    personas = {
        "healthy": Persona.single(CALLER),
        "no-tools": Persona.single(CALLER, drops_tools=True),
        "strict": Persona.single(CALLER, rejects_null_content=True),
        "quiet": Persona.single((Reply(content="ping"),)),
        "follow-up-500": Persona.single(CALLER, faults=("500",) * 9, fault_turns=(1,)),
    }
    with ChatTestServer(personas, keep_bodies=True) as server:
        yield server


def agent(server: ChatTestServer, name: str, **options: Any) -> ChatAgent:
    config = {"provider": "openai", "name": name, "base_url": server.openai_url}
    config |= {"backoff_initial_s": 0.01, "timeout_s": 5.0} | options
    return ChatAgent(ModelConfig.model_validate(config))


def test_a_healthy_stack_passes_and_the_report_goes_in_the_manifest(
    stacks: ChatTestServer,
) -> None:
    """Fails if the probe does not reach the follow-up turn or the manifest lacks it."""
    model = agent(stacks, "healthy")
    [report] = preflight_agents([model])
    assert (report.ok, report.tools_in_prompt, report.tool_call_obtained) == (True, True, True)
    assert report.follow_up_ok
    assert model.describe()["preflight"]["ok"] is True


def test_tool_choice_is_sent_and_the_echoed_assistant_content_is_a_string(
    stacks: ChatTestServer,
) -> None:
    """Fails if `tool_choice` is left out or the assistant's tool call is echoed with null.

    llama-cpp-python's server ignores tools without `tool_choice` and answers 500 to a
    null content; the `strict` persona does the latter, so a null echo fails preflight.
    """
    preflight_agents([agent(stacks, "strict")])
    bodies = [b for run, sent in stacks.stats.bodies.items() for b in sent if "preflight" in run]
    offered = [b for b in bodies if "tools" in b]
    assert offered and all(b["tool_choice"] == "auto" for b in offered)
    echoed = [m for b in bodies for m in b["messages"] if m["role"] == "assistant"]
    assert echoed and all(isinstance(m["content"], str) for m in echoed)


def test_a_stack_that_drops_the_tools_is_refused(stacks: ChatTestServer) -> None:
    """Fails if equal prompt sizes with and without tools are not read as dropped tools."""
    with pytest.raises(PreflightError, match=r"healthy|no-tools.*dropped the tools"):
        preflight_agents([agent(stacks, "no-tools")])


def test_a_stack_that_rejects_the_follow_up_is_refused(stacks: ChatTestServer) -> None:
    """Fails if a 500 on the turn after a tool result does not stop the campaign."""
    with pytest.raises(PreflightError, match=r"follow-up-500 .*follow-up turn.*http_500"):
        preflight_agents([agent(stacks, "follow-up-500", max_retries=1)])


def test_a_model_that_never_calls_the_tool_still_has_its_follow_up_checked(
    stacks: ChatTestServer,
) -> None:
    """Fails if a tool-shy model fails preflight although the tools reached its prompt,
    or if the follow-up is skipped when the model made no call of its own."""
    [report] = preflight_agents([agent(stacks, "quiet")])
    assert (report.ok, report.tool_call_obtained, report.tool_attempts) == (True, False, 3)
    assert report.follow_up_ok


def run_cli(server: ChatTestServer, model: str, ledger: Path, *extra: str) -> Any:
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--ledger", str(ledger)]
    args += ["--model", f"openai:{model}", "--base-url", server.openai_url]
    args += [*extra] if "--k" in extra else ["--k", "1", *extra]
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("model", ["no-tools", "follow-up-500"])
def test_kaudit_run_refuses_before_writing_the_ledger(
    stacks: ChatTestServer, tmp_path: Path, model: str
) -> None:
    """Fails if a failed preflight exits other than 2 or leaves a ledger file behind."""
    ledger = tmp_path / "audit.sqlite"
    result = run_cli(stacks, model, ledger)
    assert result.exit_code == 2, result.output
    assert f"preflight failed for model openai:{model} at {stacks.openai_url}" in result.output
    assert not ledger.exists()


def test_a_missing_api_key_refuses_before_writing_the_ledger(
    stacks: ChatTestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if a key variable that is unset becomes INVALID runs in a new ledger.

    Checked with and without the preflight: skipping the probe must not skip the key.
    """
    monkeypatch.delenv("KAUDIT_NO_SUCH_KEY", raising=False)
    for flags in ((), ("--no-preflight",)):
        ledger = tmp_path / f"audit{len(flags)}.sqlite"
        result = run_cli(stacks, "healthy", ledger, "--api-key-env", "KAUDIT_NO_SUCH_KEY", *flags)
        assert result.exit_code == 2, result.output
        assert "KAUDIT_NO_SUCH_KEY is not set" in result.output
        assert not ledger.exists()


def test_runs_the_stack_ended_are_recorded_with_their_error_and_flagged(
    stacks: ChatTestServer, tmp_path: Path
) -> None:
    """With the probe skipped, a stack that 500s every follow-up is measured, not hidden.

    Fails if the errored runs lose their `api_error` kind, or if `report --json` does not
    mark the cell as measuring the stack (so a reader, and the gate, could take it for
    the model's behaviour).
    """
    ledger = tmp_path / "audit.sqlite"
    config = tmp_path / "m.yaml"  # the CLI's default backoff would wait a minute here
    config.write_text(
        f"provider: openai\nname: follow-up-500\nbase_url: {stacks.openai_url}\n"
        "backoff_initial_s: 0.01\nbackoff_max_s: 0.05\n"
    )
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--ledger", str(ledger)]
    args += ["--model", str(config), "--no-preflight", "--k", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        records = list(store.records())
    assert [(r.termination, r.extra.get("api_error")) for r in records] == [
        ("errored", "http_500")
    ] * 2
    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    [cell] = json.loads(report.stdout)["cells"]
    assert (cell["api_errors"], cell["measures_stack"]) == ({"http_500": 2}, True)
