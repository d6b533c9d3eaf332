from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger._snapshot import read_tallies
from kaudit.stats import audit_miss_rate, fit_moments
from tests.conftest import FIXTURES
from tests.stats.arb_data import dev_files

runner = CliRunner()


@pytest.mark.agentrelbench
def test_imported_dev_pool_reproduces_the_published_numbers(tmp_path: Path) -> None:
    ledger = tmp_path / "arb.sqlite"
    args = ["ledger", "import", "--ledger", str(ledger)]
    for model, path in dev_files().items():
        args += ["--model-file", f"{model}={path}"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "640 runs imported, 0 already present" in first.output
    assert "0 runs imported, 640 already present" in runner.invoke(app, args).output
    tallies = read_tallies(ledger)
    assert len(tallies) == 80
    miss = audit_miss_rate(tallies)
    assert (miss.pairs, round(miss.pair, 3)) == (13, 0.798)
    fit = fit_moments([t.damage for t in tallies], [t.n for t in tallies])
    assert round(fit.icc, 3) == 0.124
    verified = runner.invoke(app, ["ledger", "verify", str(ledger)])
    assert verified.output.strip() == "640 records, hash chain intact"


def test_verify_reports_a_rewritten_record(tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    suite = str(FIXTURES / "mini_suite")
    assert (
        runner.invoke(app, ["run", "--suite", suite, "--k", "3", "--ledger", ledger]).exit_code == 0
    )
    conn = sqlite3.connect(ledger)
    conn.execute(
        "UPDATE runs SET record = replace(record, '\"seed\":', '\"seed\": ') WHERE seq = 2"
    )
    conn.commit()
    conn.close()
    result = runner.invoke(app, ["ledger", "verify", ledger])
    assert result.exit_code == 2
    assert "hash chain broken at record 2" in result.output


def test_export_jsonl_and_csv(tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    suite = str(FIXTURES / "mini_suite")
    runner.invoke(app, ["run", "--suite", suite, "--k", "2", "--ledger", ledger])
    lines = runner.invoke(app, ["ledger", "export", ledger]).stdout.splitlines()
    assert [json.loads(line)["run_index"] for line in lines] == [0, 1]
    rows = runner.invoke(app, ["ledger", "export", ledger, "--format", "csv"]).stdout.splitlines()
    assert rows[0].startswith("campaign,model,task,run_index,seed,status,outcome")
    assert len(rows) == 3


@pytest.mark.parametrize("command", [["ledger", "import", "--ledger", "l.sqlite"], ["stats"]])
def test_model_file_specs_are_parsed_once_for_every_command(command: list[str]) -> None:
    """Bug caught: `ledger import` keeping a MODEL=PATH parser of its own, so the same bad
    spec reads differently (or passes) depending on the command given it."""
    result = runner.invoke(app, [*command, "--model-file", "verdicts.jsonl"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --model-file must look like MODEL=PATH, got 'verdicts.jsonl'"
    ]
