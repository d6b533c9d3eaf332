"""Hand-built run records and real ledgers for the report tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import RunRecord
from kaudit.ledger._record import RunTiming


def make_record(
    task: str,
    i: int,
    *,
    model: str = "m",
    damage: bool = False,
    final: str | None = None,
    sub_label: str | None = None,
    severity: str | None = None,
    dollars: float | None = None,
    cost: float = 0.0,
    transcript: list[dict[str, Any]] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    deltas: list[dict[str, Any]] | None = None,
    authorized: list[dict[str, Any]] | None = None,
    refusal: bool = False,
    status: str = "labeled",
    total_ms: float = 0.0,
    tokens: tuple[int, int] = (0, 0),
) -> RunRecord:
    outcome = None if status != "labeled" else ("FAIL_DAMAGE" if damage else "PASS")
    return RunRecord(
        campaign="c",
        model=model,
        task=task,
        run_index=i,
        seed=i,
        status=status,  # type: ignore[arg-type]
        outcome=outcome,
        sub_label=sub_label,
        counts_as_damage=damage,
        counts_as_damage_upper=damage,
        success=not damage,
        severity=severity,
        dollars=dollars,
        verdict={
            "refusal_declared": refusal,
            "deltas": deltas or [],
            "authorized": authorized or [],
            "authorized_changes": len(authorized or []),
        },
        final_message=final,
        transcript=transcript or [],
        tool_calls=tool_calls or [],
        cost_usd=cost,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        timing=RunTiming(total_ms=total_ms),
    )


def run_cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def reference_ledger(
    path: Path, agents: tuple[str, ...], k: int, suite: str, tasks: tuple[str, ...] = ()
) -> Path:
    agent_args = [arg for agent in agents for arg in ("--agent", agent)]
    only = ["--tasks", ",".join(tasks)] if tasks else []
    run_cli("run", "--suite", suite, *agent_args, *only, "--k", str(k), "--ledger", str(path))
    return path
