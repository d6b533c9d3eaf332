from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import KauditError
from kaudit.ledger import Ledger, RunRecord, write_export
from kaudit.ledger._export import BATCH
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
    return result.stdout  # stderr says what was written and the ledger head


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
        (["--to", "xml"], "error: --to names an unknown format 'xml'; use parquet, csv, jsonl"),
        (["--to", "parquet"], "error: --out is required for Parquet, which is not written to "
                              "stdout"),
    ],
)  # fmt: skip
def test_bad_export_options_are_one_line_errors(
    ledger: Path, args: list[str], message: str
) -> None:
    """Bug caught: a ValueError traceback, or parquet bytes dumped on a terminal."""
    result = CliRunner().invoke(app, ["export", str(ledger), *args])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [message]


def _many(n: int, *, dollars_from: int | None = None) -> list[RunRecord]:
    """`n` records with a fault and a boundary attempt each; dollars only from one index on."""
    fault = {"call": 1, "call_id": "c1", "tool": "t", "kind": "ack_lost_after_commit",
             "committed": True, "applied": True}  # fmt: skip
    attempt = {"call": 2, "call_id": "c2", "tool": "t", "table": "account", "key": '["A"]',
               "reason": "role a may not update account"}  # fmt: skip
    base = {"campaign": "c", "model": "m", "task": "t", "status": "labeled",
            "outcome": "FAIL_DAMAGE", "faults": [fault],
            "boundary_attempts": [attempt]}  # fmt: skip
    return [
        RunRecord.model_validate(
            base
            | {"run_index": i, "seed": i}
            | {"dollars": None if dollars_from is None or i < dollars_from else "12.50"}
        )
        for i in range(n)
    ]


def test_faults_and_boundary_attempts_are_json_in_every_format(tmp_path: Path) -> None:
    """Bug caught: CSV wrote these lists as Python reprs (`[{'call': 1, ...}]`), which no
    JSON reader parses, and Parquet typed them by whatever the first rows held."""
    [record] = _many(1)
    expected = record.model_dump(mode="json")
    text = write_export([record], "csv", None)
    assert text is not None
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert json.loads(row["faults"]) == expected["faults"]
    assert json.loads(row["boundary_attempts"]) == expected["boundary_attempts"]
    out = tmp_path / "runs.parquet"
    write_export([record], "parquet", out)
    [prow] = pq.read_table(out).to_pylist()
    assert json.loads(prow["faults"]) == expected["faults"]


def test_a_large_export_is_written_in_batches_with_one_schema(tmp_path: Path) -> None:
    """Bug caught: every row built in memory before writing (one row group), or a batch
    whose all-None column is typed `null` and then clashes with a later batch holding
    dollars (pyarrow raises on the mismatched schema)."""
    records = _many(2 * BATCH + 500, dollars_from=BATCH + 10)
    out = tmp_path / "runs.parquet"
    write_export(records, "parquet", out)
    parquet = pq.ParquetFile(out)
    assert parquet.metadata.num_row_groups == 3
    dollars = parquet.read(columns=["dollars"]).column("dollars").to_pylist()
    assert dollars[BATCH + 9] is None and dollars[BATCH + 10] == "12.50"
    assert len(dollars) == len(records)


def test_text_exports_stream_rows_as_they_are_read() -> None:
    """Bug caught: the whole ledger converted before the first line is written (a
    10,000-run export then held every row in memory at once)."""
    consumed = 0

    def records() -> Iterator[RunRecord]:
        nonlocal consumed
        for record in _many(3 * BATCH):
            consumed += 1
            yield record

    class Probe(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.consumed_at: list[int] = []  # records read when each write came

        def write(self, text: str) -> int:
            self.consumed_at.append(consumed)
            return super().write(text)

    for fmt in ("jsonl", "csv"):
        consumed = 0
        probe = Probe()
        write_export(records(), fmt, None, probe)
        rows_at = probe.consumed_at[1:] if fmt == "csv" else probe.consumed_at  # no header
        assert rows_at[0] <= BATCH, fmt
        assert probe.getvalue().count("\n") >= 3 * BATCH


def test_a_failed_export_leaves_no_file_behind(tmp_path: Path) -> None:
    """Bug caught: an export that fails half-way (a record that cannot be read) leaves a
    truncated file under the requested name, which a later reader takes for the ledger."""

    def broken() -> Iterator[RunRecord]:
        yield from _many(BATCH + 1)
        raise KauditError("record 1002 is not a run record")

    for fmt, name in (("jsonl", "runs.jsonl"), ("parquet", "runs.parquet")):
        out = tmp_path / name
        with pytest.raises(KauditError):
            write_export(broken(), fmt, out)
        assert list(tmp_path.iterdir()) == []
