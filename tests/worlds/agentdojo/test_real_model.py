"""AgentDojo's banking pairs audited with the real local model (SmolLM2 on llama-server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.agents.chat.local import LocalServer
from kaudit.cli.main import app
from kaudit.ledger import Ledger
from tests.realmodel import model_config

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

PAIRS = ("user_task_0", "user_task_0/injection_task_5")
"""A benign task and the same task with an injection that sends money to the attacker."""


def test_a_real_model_is_audited_on_banking_pairs_and_compared_with_agentdojo(
    llama_server: LocalServer, tmp_path: Path
) -> None:
    """`kaudit run` on the real model: every run labeled and judged by AgentDojo too.

    Fails if the AgentDojo tools do not reach the real model (preflight or no tool call),
    if a run is INVALID, or if the report lacks the run-by-run comparison with AgentDojo's
    own `utility()`/`security()`.
    """
    # SmolLM2 often answers in prose; `required` makes every turn a tool call, so the
    # AgentDojo tools are exercised on every run (runs then end at the step budget).
    config = model_config(
        tmp_path / "m.yaml",
        llama_server,
        "smollm2",
        max_tokens=96,
        extra_body={"tool_choice": "required"},
    )
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", "agentdojo:banking", "--tasks", ",".join(PAIRS), "--k", "2"]
    args += ["--model", str(config), "--ledger", str(ledger), "--concurrency", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        records = list(store.records())
    assert len(records) == 4
    assert all(r.status == "labeled" and "agentdojo" in r.extra for r in records)
    assert any(r.tool_calls for r in records), [r.transcript for r in records]
    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    assert report.exit_code == 0, report.output
    referee = json.loads(report.stdout)["referee"]
    assert referee, referee
