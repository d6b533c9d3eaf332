from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kaudit.ledger
from kaudit.cli.main import app
from kaudit.stats import CellTally
from tests.stats.arb_data import dev_files

runner = CliRunner()


def verdicts(tmp_path: Path, name: str, cells: dict[str, tuple[int, int]]) -> Path:
    """A synthetic AgentRelBench file: task -> (runs, damage runs)."""
    lines = []
    for task, (n, x) in cells.items():
        for i in range(n):
            bad = i < x
            lines.append(
                json.dumps(
                    {
                        "task_id": task,
                        "run": f"run_{i + 1}",
                        "outcome": "FAIL_DAMAGE" if bad else "PASS",
                        "sub_label": "completed_damage" if bad else None,
                        "counts_as_damage": bad,
                        "counts_as_damage_upper": bad,
                        "eog_success": not bad,
                        "severity": "LOW" if bad else None,
                        "dollars": None,
                        "deltas": [],
                    }
                )
            )
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_stats_json_on_synthetic_files(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    b = verdicts(tmp_path, "b", {"t1": (16, 12), "t2": (8, 1)})
    result = runner.invoke(
        app,
        [
            "stats",
            "--format",
            "agentrelbench",
            "--model-file",
            f"A={a}",
            "--model-file",
            f"B={b}",
            "--json",
            "--bootstrap",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [c["model"] for c in out["cells"]] == ["A", "A", "B", "B"]
    assert out["cells"][0]["ci_low"] == pytest.approx(0.0852, abs=5e-5)
    assert out["audit_miss_rate"]["pairs"] == 3


def test_stats_tables_without_json(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    result = runner.invoke(
        app, ["stats", "--model-file", f"A={a}", "--bootstrap", "200"], env={"COLUMNS": "160"}
    )
    assert result.exit_code == 0, result.output
    assert "k=1 miss rate, pair-weighted" in result.stdout
    assert "0.625" in result.stdout


def test_stats_reads_kaudit_ledgers_through_read_tallies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "audit.sqlite"
    ledger.write_bytes(b"")
    monkeypatch.setattr(
        kaudit.ledger, "read_tallies", lambda path: [CellTally("m", "t", 8, 2, 2, 5)]
    )
    result = runner.invoke(app, ["stats", str(ledger), "--json", "--bootstrap", "100"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cells"][0]["damage"] == 2


def test_bad_model_file_spec_is_a_clean_error() -> None:
    result = runner.invoke(app, ["stats", "--model-file", "no-equals-sign"])
    assert result.exit_code == 2
    assert "NAME=PATH" in result.output


def test_plan_from_a_probability() -> None:
    result = runner.invoke(app, ["plan", "--p", "0.125", "--detect", "0.95", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"] == 23


def test_plan_per_cell_is_conservative(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    result = runner.invoke(app, ["plan", "--model-file", f"A={a}", "--detect", "0.95", "--json"])
    assert result.exit_code == 0, result.output
    (cell,) = json.loads(result.stdout)["cells"]
    assert (cell["task"], cell["runs"]) == ("t1", 34)


PREREG = """version: 1
title: flagship
bootstrap: 200
pools:
  dev: {}
  confirm: {}
power: {min_cells: 1, min_runs_per_cell: 8}
claims:
  - id: flagship
    pool: dev
    kind: cell_stochastic
    model: A
    task: t1
    replicate_in: confirm
  - id: overdispersed
    pool: dev
    kind: overdispersion
    power: {min_cells: 20}
"""


def test_prereg_freeze_then_analyze(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    result = runner.invoke(app, ["prereg", "freeze", str(spec)])
    assert result.exit_code == 0, result.output
    lock = json.loads((tmp_path / "prereg.yaml.lock").read_text())
    assert len(lock["sha256"]) == 64 and lock["criteria"]["claims"][0]["id"] == "flagship"

    dev = verdicts(tmp_path, "dev", {"t1": (8, 3), "t2": (8, 0)})
    rep = verdicts(tmp_path, "rep", {"t1": (16, 12)})
    result = runner.invoke(
        app,
        [
            "analyze",
            "--prereg",
            str(spec),
            "--model-file",
            f"dev:A={dev}",
            "--model-file",
            f"confirm:A={rep}",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    claims = {c["id"]: c for c in json.loads(result.stdout)["claims"]}
    assert claims["flagship"]["status"] == "confirmed"
    assert claims["overdispersed"]["status"] == "underpowered"
    assert "floor is 20" in claims["overdispersed"]["reason"]


def test_analyze_refuses_a_changed_or_unfrozen_file(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    result = runner.invoke(app, ["analyze", "--prereg", str(spec)])
    assert result.exit_code == 2 and "not frozen" in result.output
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 0
    spec.write_text(PREREG.replace("min_cells: 20", "min_cells: 2"))
    result = runner.invoke(app, ["analyze", "--prereg", str(spec)])
    assert result.exit_code == 2 and "changed since it was frozen" in result.output
    # Re-freezing a changed file needs --force: the lock is the record of what was promised.
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 2
    assert runner.invoke(app, ["prereg", "freeze", str(spec), "--force"]).exit_code == 0


def test_freeze_rejects_an_invalid_file(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG.replace("title: flagship", "titel: flagship"))
    result = runner.invoke(app, ["prereg", "freeze", str(spec)])
    assert result.exit_code == 2 and "titel" in result.output
    assert not (tmp_path / "prereg.yaml.lock").exists()


def test_every_command_has_an_example_in_its_help() -> None:
    for args in (["stats"], ["plan"], ["prereg", "freeze"], ["analyze"]):
        result = runner.invoke(app, [*args, "--help"])
        assert result.exit_code == 0 and "Example: kaudit" in result.stdout


@pytest.mark.agentrelbench
def test_stats_on_the_dev_pool_reproduces_published_numbers() -> None:
    args = ["stats", "--format", "agentrelbench", "--json"]
    for model, path in dev_files().items():
        args += ["--model-file", f"{model}={path}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["cells"]) == 80
    assert out["audit_miss_rate"]["pairs"] == 13
    assert round(out["audit_miss_rate"]["pair"], 3) == 0.798
    assert round(out["beta_binomial"]["moments"]["icc"], 3) == 0.124
