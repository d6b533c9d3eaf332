from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger
from kaudit.report import budget
from kaudit.report._budget import format_duration, run_costs
from tests.report.conftest import make_record


def _runs() -> list:
    return [
        make_record("a", 0, model="gpt", cost=0.02, total_ms=30_000, tokens=(1000, 200)),
        make_record("a", 1, model="gpt", cost=0.04, total_ms=90_000, tokens=(3000, 400)),
        make_record("b", 0, model="gpt", cost=0.03, total_ms=60_000, status="invalid"),
        make_record("a", 0, model="small", cost=0.001, total_ms=6_000, tokens=(10, 5)),
    ]


def test_costs_are_means_over_every_recorded_run_invalid_included() -> None:
    """Bug caught: leaving INVALID runs out of spend (they were paid for) or ms not -> s."""
    gpt, small = run_costs(_runs())
    assert (gpt.model, gpt.runs) == ("gpt", 3)
    assert abs(gpt.dollars - 0.03) < 1e-12
    assert gpt.seconds == 60.0
    assert gpt.input_tokens == 4000 / 3
    assert (small.runs, small.seconds) == (1, 6.0)


def test_budget_turns_runs_into_money_and_time() -> None:
    """Bug caught: runs per task not multiplied by tasks, or time not divided by concurrency."""
    gpt = run_costs(_runs())[0]
    plan = budget(gpt, p=0.1, detect=0.95, tasks=24, concurrency=8)
    assert plan.runs_per_task == 29  # 0.9**29 = 0.047 <= 0.05 < 0.9**28
    assert plan.runs == 696
    assert abs(plan.dollars - 696 * 0.03) < 1e-9
    assert plan.seconds == 696 * 60.0 / 8
    assert plan.sentence() == (
        "gpt: to see damage of probability 0.1 with 95% certainty per task on 24 tasks: "
        "696 runs (29 per task), ≈ $20.88, ≈ 1,067,200 tokens, ≈ 1 h 27 min at concurrency 8; "
        f"chance that all 24 tasks see it: {(1 - 0.9**29) ** 24:.2f} (95% on all takes "
        f"{plan.runs_per_task_all} per task)"
    )


def test_the_plan_states_the_per_task_and_the_all_tasks_chance() -> None:
    """95% per task on 32 tasks is about 0.19 that all 32 see their damage; the sentence
    says both, and the runs for 95% on all. Fails on the sentence that said "95% certainty
    on 32 tasks" alone."""
    gpt = run_costs(_runs())[0]
    plan = budget(gpt, p=0.1, detect=0.95, tasks=32, concurrency=1)
    assert plan.all_tasks_detect == pytest.approx((1 - 0.9**29) ** 32)
    assert plan.all_tasks_detect < 0.25
    per_task = plan.runs_per_task_all
    assert (1 - 0.9**per_task) ** 32 >= 0.95 > (1 - 0.9 ** (per_task - 1)) ** 32
    assert "per task on 32 tasks" in plan.sentence()
    assert f"all 32 tasks see it: {plan.all_tasks_detect:.2f}" in plan.sentence()


def test_durations_read_naturally() -> None:
    """Bug caught: minutes shown without zero padding or days as hours."""
    assert [format_duration(s) for s in (42, 600, 3 * 3600 + 300, 50 * 3600)] == [
        "42 s",
        "10 min",
        "3 h 05 min",
        "2 d 2 h",
    ]


def test_plan_from_ledger_reads_a_real_ledger(tmp_path: Path) -> None:
    """Bug caught: the CLI ignoring --tasks/--concurrency, or printing a traceback without --p."""
    path = tmp_path / "costs.sqlite"
    with Ledger(path) as ledger:
        ledger.open_campaign("c", {})
        for record in _runs():
            ledger.append(record)
    runner = CliRunner()
    args = ["plan", "--p", "0.1", "--from-ledger", str(path), "--tasks", "24"]
    result = runner.invoke(app, [*args, "--concurrency", "8", "--json"])
    assert result.exit_code == 0, result.output
    gpt, small = json.loads(result.output)
    assert (gpt["runs"], gpt["seconds"], small["seconds"]) == (696, 5220.0, 522.0)
    text = runner.invoke(app, [*args, "--concurrency", "8"]).output
    assert "gpt: to see damage of probability 0.1 with 95% certainty per task on 24 tasks" in text
    missing = runner.invoke(app, ["plan", "--from-ledger", str(path)])
    assert missing.exit_code == 2
    assert missing.output.strip().splitlines() == [
        "error: --from-ledger needs --p: the damage probability to plan for"
    ]


def test_plan_prices_an_audit_from_a_real_chat_models_measured_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: tokens or dollars read from the wrong record fields, so a real model's
    ledger plans an audit at $0 (runs over real HTTP with the official openai client)."""
    from kaudit.agents.chat.testserver import ChatTestServer
    from tests.agents.chat.personas import personas
    from tests.conftest import FIXTURES

    monkeypatch.setenv("KAUDIT_TEST_KEY", "not-a-real-key")
    ledger = tmp_path / "chat.sqlite"
    with ChatTestServer(personas(), timeout_sleep_s=1.0) as server:
        config = tmp_path / "mixture.yaml"
        config.write_text(
            f"provider: openai\nname: mixture\nlabel: mixture\nbase_url: {server.openai_url}\n"
            "api_key_env: KAUDIT_TEST_KEY\nprice: {input: 2.0, output: 8.0}\n"
        )
        args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--ledger", str(ledger)]
        result = CliRunner().invoke(app, [*args, "--k", "4", "--model", str(config)])
        assert result.exit_code == 0, result.output
    with Ledger(ledger) as store:
        records = list(store.records())
    spent = sum(r.cost_usd for r in records)
    tokens = sum(r.input_tokens + r.output_tokens for r in records)
    assert spent > 0 and tokens > 0
    out = CliRunner().invoke(
        app, ["plan", "--p", "0.2", "--from-ledger", str(ledger), "--tasks", "10", "--json"]
    )
    assert out.exit_code == 0, out.output
    (plan,) = json.loads(out.output)
    assert (plan["runs_per_task"], plan["runs"]) == (14, 140)  # 0.8**14 = 0.044 <= 0.05
    assert abs(plan["dollars"] - 140 * spent / 4) < 1e-9
    assert abs(plan["tokens"] - 140 * tokens / 4) < 1e-6
    seconds = 140 * sum(r.timing.total_ms for r in records) / 4 / 1000
    assert plan["seconds"] > 0 and abs(plan["seconds"] - seconds) < 1e-9 * seconds
