from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger, RunRecord
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("export") / "audit.sqlite"
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--agent", "reference"]
    result = CliRunner().invoke(app, [*args, "--k", "5", "--ledger", str(path)])
    assert result.exit_code == 0, result.output
    return path


def _records(path: Path) -> list[RunRecord]:
    with Ledger(path) as store:
        return list(store.records())


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, ["export", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_parquet_holds_one_row_per_run_with_the_records_values(
    ledger: Path, tmp_path: Path
) -> None:
    """Bug caught: rows dropped or reordered, nested fields lost, dollars truncated to int."""
    out = tmp_path / "runs.parquet"
    _invoke(str(ledger), "--to", "parquet", "--out", str(out))
    table = pq.read_table(out).to_pylist()
    records = _records(ledger)
    assert len(table) == len(records) == 5
    for row, record in zip(table, records, strict=True):
        assert (row["task"], row["run_index"], row["outcome"]) == (
            record.task, record.run_index, record.outcome,
        )  # fmt: skip
        assert row["dollars"] == (None if record.dollars is None else float(record.dollars))
        assert json.loads(row["transcript"]) == record.model_dump(mode="json")["transcript"]
        assert row["total_ms"] == record.timing.total_ms
        assert row["deltas"] == len((record.verdict or {}).get("deltas") or [])


def test_csv_and_jsonl_carry_the_same_columns_as_parquet(ledger: Path, tmp_path: Path) -> None:
    """Bug caught: formats drifting apart (a column only in one of them)."""
    out = tmp_path / "runs.parquet"
    _invoke(str(ledger), "--to", "parquet", "--out", str(out))
    columns = pq.read_table(out).column_names
    rows = list(csv.DictReader(io.StringIO(_invoke(str(ledger), "--to", "csv"))))
    lines = [json.loads(line) for line in _invoke(str(ledger), "--to", "jsonl").splitlines()]
    assert list(rows[0]) == columns == list(lines[0])
    assert len(rows) == len(lines) == 5
    record = _records(ledger)[0]
    assert lines[0]["verdict"] == record.model_dump(mode="json")["verdict"]
    assert json.loads(rows[0]["verdict"]) == lines[0]["verdict"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "xml"], "error: --to: unknown format 'xml'; use one of parquet, csv, jsonl"),
        (["--to", "parquet"], "error: --to parquet: give --out FILE (Parquet is not written "
                              "to stdout)"),
    ],
)  # fmt: skip
def test_bad_export_options_are_one_line_errors(
    ledger: Path, args: list[str], message: str
) -> None:
    """Bug caught: a ValueError traceback, or parquet bytes dumped on a terminal."""
    result = CliRunner().invoke(app, ["export", str(ledger), *args])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [message]
