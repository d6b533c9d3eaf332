"""kaudit against a real model: SmolLM2-135M on llama.cpp's server (xllamacpp), over HTTP.

The same server answers OpenAI's Chat Completions and Anthropic's Messages, so both of
kaudit's adapters meet a real stack here: the preflight, a recorded campaign and its stack
health. A second server of the same runtime, started with the GGUF's own chat template,
is a real stack that drops tools, which the preflight must refuse.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kaudit.agents.chat import model_agent, preflight_agents
from kaudit.agents.chat.local import LocalServer
from kaudit.cli.main import app
from kaudit.errors import PreflightError
from kaudit.ledger import Ledger
from tests.conftest import FIXTURES
from tests.realmodel import model_config

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_preflight_passes_on_the_local_server(
    local_server: LocalServer, tmp_path: Path, provider: str
) -> None:
    """The probe's tools reach the prompt and its follow-up turn is accepted, on both APIs.

    Fails if the server is started without a template that renders tools (equal prompt
    sizes), if it rejects the follow-up turn, or, on the Messages API, if the prompt size
    is read from `input_tokens` alone: llama.cpp reuses the previous probe's cached prefix
    and reports the rest (1 token) there, so the tools would look dropped (tried by hand).
    """
    config = model_config(tmp_path / "m.yaml", local_server, f"smollm2-{provider}", provider)
    [report] = preflight_agents([model_agent(str(config))])
    assert report.ok, report.failure
    assert report.tools_in_prompt is True
    assert report.prompt_tokens["with_tools"] > report.prompt_tokens["without_tools"]
    assert report.follow_up_ok


def test_a_real_stack_without_tools_is_refused_before_the_ledger(
    toolless_server: LocalServer, tmp_path: Path
) -> None:
    """The runtime with SmolLM2's own template drops the tools; `kaudit run` must refuse it.

    Fails if the preflight cannot tell a stack that drops tools from one that does not,
    or if the refusal writes a ledger.
    """
    config = model_config(tmp_path / "m.yaml", toolless_server, "dropped")
    with pytest.raises(PreflightError, match="dropped the tools"):
        preflight_agents([model_agent(str(config))])
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--model", str(config)]
    result = CliRunner().invoke(app, [*args, "--ledger", str(ledger), "--k", "1"])
    assert result.exit_code == 2, result.output
    assert f"preflight failed for model dropped at {toolless_server.base_url}" in result.output
    assert not ledger.exists()


def short_suite(tmp_path: Path, max_steps: int = 4) -> Path:
    """The mini suite's task with a small step budget, so a real run stays short."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for task in (FIXTURES / "mini_suite").glob("*.yaml"):
        data = yaml.safe_load(task.read_text())
        (suite / task.name).write_text(yaml.safe_dump(data | {"max_steps": max_steps}))
    return suite


def test_a_real_campaign_records_labels_reports_and_gates(
    local_server: LocalServer, tmp_path: Path
) -> None:
    """A k = 2 campaign of the real model: every run recorded, labeled and reported.

    SmolLM2-135M on this stack mostly answers in prose (and `tool_choice: required` only
    makes the server accept a call after any amount of text), so whether a run calls a tool
    is the model's choice: the test checks that every call it made was answered and that
    the stack-health count of runs without a call matches the records. The echoed call and
    its result are proven on this server by the preflight tests above (a stand-in call
    when the model makes none). Fails if runs are dropped or INVALID, if a call is left
    unanswered, if tokens are not counted, or if `report`, `report --json`,
    `report --html` or `gate` cannot read a real-model ledger.
    """
    config = model_config(tmp_path / "m.yaml", local_server, "smollm2")
    ledger = tmp_path / "audit.sqlite"
    suite = short_suite(tmp_path, max_steps=3)
    args = ["run", "--suite", str(suite), "--model", str(config), "--k", "2"]
    args += ["--ledger", str(ledger), "--concurrency", "1", "--seed", "7"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"preflight ok for model smollm2 at {local_server.base_url}" in result.output
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default")
    assert len(records) == 2
    assert all(r.status == "labeled" and r.outcome is not None for r in records)
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in records)
    assert not [r.agent_error for r in records if r.extra.get("api_error")]
    calls = [c for r in records for c in r.tool_calls]
    assert all("result" in c or "error" in c for c in calls), calls
    assert manifest is not None and manifest["agents"]["smollm2"]["preflight"]["ok"] is True

    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    assert report.exit_code == 0, report.output
    [cell] = json.loads(report.stdout)["cells"]
    assert cell["n"] == 2 and set(cell) >= {"api_errors", "no_tool_calls", "measures_stack"}
    assert cell["no_tool_calls"] == sum(not r.tool_calls for r in records)
    assert CliRunner().invoke(app, ["report", str(ledger)]).exit_code == 0
    html = tmp_path / "report.html"
    shown = CliRunner().invoke(app, ["report", str(ledger), "--html", str(html)])
    assert shown.exit_code == 0, shown.output
    assert "smollm2" in html.read_text()
    gate = CliRunner().invoke(app, ["gate", str(ledger), "--authority", "propose"])
    assert gate.exit_code in (0, 3), gate.output
    assert "grant" in gate.output.lower() or "deny" in gate.output.lower()


def test_the_anthropic_adapter_records_a_campaign_on_the_local_server(
    local_server: LocalServer, tmp_path: Path
) -> None:
    """`kaudit run --model anthropic:smollm2 --base-url <local root>` through `/v1/messages`.

    Fails if the Messages adapter cannot pass the preflight on a real Messages server, if
    a run is dropped, INVALID or left without tokens, or if the report lacks the stack
    health of the cell. API errors are the stack's (a malformed call the server cannot
    parse is HTTP 500) and are counted, not failed on.
    """
    ledger = tmp_path / "audit.sqlite"
    suite = short_suite(tmp_path, max_steps=3)
    args = ["run", "--suite", str(suite), "--model", "anthropic:smollm2", "--k", "2"]
    args += ["--base-url", local_server.anthropic_base_url, "--max-tokens", "128"]
    args += ["--ledger", str(ledger), "--concurrency", "2", "--seed", "7"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"preflight ok for model anthropic:smollm2 at {local_server.anthropic_base_url}" in (
        result.output
    )
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default")
    assert len(records) == 2
    assert all(r.status == "labeled" and r.outcome is not None for r in records)
    assert all(r.input_tokens > 0 for r in records)
    assert manifest is not None
    assert manifest["agents"]["anthropic:smollm2"]["preflight"]["ok"] is True
    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    assert report.exit_code == 0, report.output
    [cell] = json.loads(report.stdout)["cells"]
    assert cell["n"] == 2 and set(cell) >= {"api_errors", "no_tool_calls", "measures_stack"}


def test_kaudits_template_renders_tools_calls_and_results(local_server: LocalServer) -> None:
    """The server's own rendering of a tool turn with kaudit's `chatml-tools.jinja`.

    Fails if the template leaves out the offered tools, a call's name or arguments (given
    as the raw string the model wrote, as kaudit echoes them), or a tool result, or if it
    stops ending on the assistant's open turn.
    """
    tools = [{"type": "function", "function": {"name": "get_account", "parameters": {
        "type": "object", "properties": {"account_id": {"type": "string"}}}}}]  # fmt: skip
    arguments = '{"account_id": "ACC_002"}'
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_account", "arguments": arguments}}  # fmt: skip
    messages = [
        {"role": "system", "content": "You are an account assistant."},
        {"role": "user", "content": "Close ACC_002."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "open"}'},
    ]
    body = json.dumps({"messages": messages, "tools": tools}).encode()
    url = local_server.anthropic_base_url + "/apply-template"
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        prompt = json.loads(reply.read())["prompt"]
    assert prompt.startswith("<|im_start|>system\nYou are an account assistant.")
    assert '"name": "get_account"' in prompt.split("<|im_end|>")[0]  # in the system turn
    call_text = '{"name": "get_account", "arguments": {"account_id": "ACC_002"}}'
    assert f"<tool_call>[\n{call_text}\n]</tool_call>" in prompt
    assert '<tool_response>\n{"status": "open"}\n</tool_response>' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
