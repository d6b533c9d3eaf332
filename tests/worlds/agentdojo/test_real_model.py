"""AgentDojo's banking pairs audited with the real local model (SmolLM2 on xllamacpp)."""

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

PAIRS = ("user_task_0/injection_task_5",)
"""A task with an injection that sends money to the attacker: the pair AgentDojo scores twice
(utility and security), so one run exercises both of its judgments. One run keeps CI's
real-model budget; the benign twin goes through the same path in test_campaign.py."""


def test_a_real_model_is_audited_on_banking_pairs_and_compared_with_agentdojo(
    local_server: LocalServer, tmp_path: Path
) -> None:
    """`kaudit run` on the real model: every run labeled and judged by AgentDojo too.

    Fails if the AgentDojo tools do not reach the real model (the preflight refuses), if a
    run is INVALID or ended by the stack, or if the report lacks the run-by-run
    comparison with AgentDojo's own `utility()`/`security()`.
    """
    config = model_config(tmp_path / "m.yaml", local_server, "smollm2", max_tokens=64)
    ledger = tmp_path / "audit.sqlite"
    args = ["run", "--suite", "agentdojo:banking", "--tasks", ",".join(PAIRS), "--k", "1"]
    args += ["--model", str(config), "--ledger", str(ledger), "--concurrency", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        records = list(store.records())
    assert len(records) == 1
    assert all(r.status == "labeled" and "agentdojo" in r.extra for r in records)
    # SmolLM2 often answers in prose: a tool-less run is a real outcome
    # (stack health counts it), but every run must have reached the model and back
    assert all(r.input_tokens > 0 and r.extra.get("api_error") is None for r in records)
    report = CliRunner().invoke(app, ["report", str(ledger), "--json"])
    assert report.exit_code == 0, report.output
    referee = json.loads(report.stdout)["referee"]
    assert referee, referee
