"""kaudit against a real model: SmolLM2-135M on llama.cpp's servers, over real HTTP.

The preflight tests use llama-cpp-python's server, the stack on which kaudit first met a
real model and failed: it ignores tools unless `tool_choice` is sent and answers HTTP 500
to an echoed assistant message whose content is null. The campaign test uses
llama-server, whose reply cap and several slots keep a real campaign bounded.
"""

from __future__ import annotations

import json
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


def test_the_preflight_passes_on_llama_cpp_python_server(
    llama_cpp_server: LocalServer, tmp_path: Path
) -> None:
    """The probe's tools reach the prompt and its follow-up turn is accepted.

    Fails if `tool_choice` is not sent (this server then leaves the tools out of the
    prompt: "dropped the tools"), or if the assistant's tool call is echoed with
    `"content": null` (this server answers the follow-up with HTTP 500). Both were tried
    by hand: each makes this test fail with that preflight message.
    """
    config = model_config(tmp_path / "m.yaml", llama_cpp_server, "smollm2-llama-cpp-python")
    [report] = preflight_agents([model_agent(str(config))])
    assert report.ok, report.failure
    assert report.tools_in_prompt is True
    assert report.prompt_tokens["with_tools"] > report.prompt_tokens["without_tools"]
    assert report.follow_up_ok


def test_a_real_stack_without_tools_is_refused_before_the_ledger(
    llama_cpp_server: LocalServer, tmp_path: Path
) -> None:
    """Withholding `tool_choice` reproduces the silent drop; `kaudit run` must refuse it.

    Fails if the preflight cannot tell a stack that drops tools from one that does not,
    or if the refusal writes a ledger. `extra_body` sends `tool_choice: null`, which this
    server reads as no tool calling, exactly what kaudit used to send.
    """
    config = model_config(
        tmp_path / "m.yaml", llama_cpp_server, "dropped", extra_body={"tool_choice": None}
    )
    with pytest.raises(PreflightError, match="dropped the tools"):
        preflight_agents([model_agent(str(config))])
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--model", str(config)]
    result = CliRunner().invoke(app, [*args, "--ledger", str(ledger), "--k", "1"])
    assert result.exit_code == 2, result.output
    assert f"preflight failed for model dropped at {llama_cpp_server.base_url}" in result.output
    assert not ledger.exists()


def short_suite(tmp_path: Path, max_steps: int = 4) -> Path:
    """The mini suite's task with a small step budget, so a real run stays short."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for task in (FIXTURES / "mini_suite").glob("*.yaml"):
        data = yaml.safe_load(task.read_text())
        (suite / task.name).write_text(yaml.safe_dump(data | {"max_steps": max_steps}))
    return suite


def test_the_preflight_passes_on_llama_server(llama_server: LocalServer, tmp_path: Path) -> None:
    """llama-server with the tool-rendering template puts the tools in the prompt.

    Fails if the server is started without a template that renders tools (SmolLM2's own
    template drops them: equal prompt sizes), or if it rejects the follow-up turn.
    """
    config = model_config(tmp_path / "m.yaml", llama_server, "smollm2-llama-server")
    [report] = preflight_agents([model_agent(str(config))])
    assert report.ok, report.failure
    assert report.tools_in_prompt is True and report.follow_up_ok


def test_a_real_campaign_records_labels_reports_and_gates(
    llama_cpp_server: LocalServer, tmp_path: Path
) -> None:
    """A k = 2 campaign of the real model: every run recorded and labeled, tools used.

    On llama-cpp-python's server, whose `chatml-function-calling` handler makes SmolLM2
    call tools (on llama-server it mostly answers in prose, which would leave the tool
    path untested). Fails if runs are dropped or INVALID, if no tool call is made and
    answered (tools not reaching the model, or the follow-up rejected: a null content
    echo makes every second turn HTTP 500 and the runs `errored`), if tokens are not
    counted, or if `report`, `report --json`, `report --html` or `gate` cannot read a
    real-model ledger.
    """
    llama_server = llama_cpp_server
    config = model_config(tmp_path / "m.yaml", llama_server, "smollm2")
    ledger = tmp_path / "audit.sqlite"
    suite = short_suite(tmp_path, max_steps=3)
    args = ["run", "--suite", str(suite), "--model", str(config), "--k", "2"]
    args += ["--ledger", str(ledger), "--concurrency", "1", "--seed", "7"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"preflight ok for model smollm2 at {llama_server.base_url}" in result.output
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default")
    assert len(records) == 2
    assert all(r.status == "labeled" and r.outcome is not None for r in records)
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in records)
    assert not [r.agent_error for r in records if r.extra.get("api_error")]
    answered = [c for r in records for c in r.tool_calls if "result" in c or "error" in c]
    assert answered, [r.transcript for r in records]
    assert manifest is not None and manifest["agents"]["smollm2"]["preflight"]["ok"] is True

    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    assert report.exit_code == 0, report.output
    [cell] = json.loads(report.stdout)["cells"]
    assert cell["n"] == 2 and set(cell) >= {"api_errors", "no_tool_calls", "measures_stack"}
    assert CliRunner().invoke(app, ["report", str(ledger)]).exit_code == 0
    html = tmp_path / "report.html"
    shown = CliRunner().invoke(app, ["report", str(ledger), "--html", str(html)])
    assert shown.exit_code == 0, shown.output
    assert "smollm2" in html.read_text()
    gate = CliRunner().invoke(app, ["gate", str(ledger), "--authority", "propose"])
    assert gate.exit_code in (0, 3), gate.output
    assert "grant" in gate.output.lower() or "deny" in gate.output.lower()
