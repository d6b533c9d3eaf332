"""Exporting a ledger one row per run, as Parquet, CSV or JSON lines, with one column set.

Scalar fields stay typed columns; nested ones (verdict, transcript, tool calls, extra) are
JSON text in CSV and Parquet and nested objects in JSON lines, so every format carries
the whole record and a dataframe reads any of them the same way.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from kaudit.errors import KauditError
from kaudit.ledger._record import RunRecord

__all__ = ["EXPORT_FORMATS", "ExportFormat", "export_rows", "run_row", "write_export"]

ExportFormat = Literal["parquet", "csv", "jsonl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("parquet", "csv", "jsonl")

NESTED = ("verdict", "transcript", "tool_calls", "extra")
TIMING = ("seed_ms", "agent_ms", "dump_ms", "label_ms", "total_ms")


def run_row(record: RunRecord) -> dict[str, Any]:
    """One run as a flat row: record fields, timing as `<phase>` columns, nested as values."""
    data = record.model_dump(mode="json")
    timing = data.pop("timing")
    row = {name: value for name, value in data.items() if name not in NESTED}
    row |= {name: timing[name] for name in TIMING}
    row["deltas"] = len((record.verdict or {}).get("deltas") or [])
    row |= {name: data[name] for name in NESTED}
    return row


def export_rows(records: Iterable[RunRecord]) -> list[dict[str, Any]]:
    """Every record as a :func:`run_row`, in ledger order."""
    return [run_row(record) for record in records]


def _as_text(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, sort_keys=True) if k in NESTED else v for k, v in row.items()}


def _columns() -> list[str]:
    sample = RunRecord(campaign="c", model="m", task="t", run_index=0, seed=0, status="invalid")
    return list(run_row(sample))


def _parquet(rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KauditError("parquet export needs pyarrow: pip install 'kaudit[parquet]'") from None
    columns = _columns()
    texts = [_as_text(row) for row in rows]
    data = {name: [row[name] for row in texts] for name in columns}
    # dollars are exact decimal text in the records; a string column keeps them exact.
    data["dollars"] = [None if v is None else str(v) for v in data["dollars"]]
    pq.write_table(pa.table(data), path)


def write_export(records: Iterable[RunRecord], fmt: str, out: Path | None) -> str | None:
    """Write the rows to `out` (required for parquet); with no `out`, return the text."""
    if fmt not in EXPORT_FORMATS:
        raise KauditError(f"--to: unknown format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    rows = export_rows(records)
    if fmt == "parquet":
        if out is None:
            raise KauditError("--to parquet: give --out FILE (Parquet is not written to stdout)")
        _parquet(rows, out)
        return None
    if fmt == "jsonl":
        text = "".join(json.dumps(row, sort_keys=False) + "\n" for row in rows)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=_columns(), lineterminator="\n")
        writer.writeheader()
        writer.writerows(_as_text(row) for row in rows)
        text = buffer.getvalue()
    if out is None:
        return text
    out.write_text(text, encoding="utf-8")
    return None
