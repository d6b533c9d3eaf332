"""Exporting a ledger one row per run, as Parquet, CSV or JSON lines, with one column set.

Scalar fields stay typed columns; nested ones (verdict, transcript, tool calls, faults,
boundary attempts, extra) are JSON text in CSV and Parquet and nested objects in JSON
lines, so every format carries the whole record and a dataframe reads any of them the
same way. Rows are written as they are read, a batch at a time, so exporting a large
ledger holds one batch in memory, not the whole ledger; a file is written under a
temporary name and renamed when complete, so a failed export never leaves half a file.
"""

from __future__ import annotations

import csv
import io
import json
import types
import typing
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any, Literal

from kaudit._atomic import replacing as _replacing
from kaudit.errors import InputError, KauditError
from kaudit.ledger._record import RunRecord

__all__ = ["EXPORT_FORMATS", "ExportFormat", "export_rows", "run_row", "write_export"]

ExportFormat = Literal["parquet", "csv", "jsonl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("parquet", "csv", "jsonl")

NESTED = (
    "verdict",
    "transcript",
    "tool_calls",
    "faults",
    "boundary_attempts",
    "extra",
    "stopping_rule",
)
TIMING = ("seed_ms", "agent_ms", "dump_ms", "label_ms", "total_ms")
BATCH = 1000
"""Rows per Parquet row group (and per batch held in memory)."""


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


def _scalar(annotation: object) -> str:
    """The Arrow type name of a record field: its type with None and Literal unwrapped."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _scalar(args[0])
    if typing.get_origin(annotation) is Literal:
        return "string"
    arrow: dict[object, str] = {int: "int64", bool: "bool_", float: "float64"}
    return arrow.get(annotation, "string")


def _arrow_schema() -> Any:
    """One fixed schema, so every batch (an all-None column included) has the same types."""
    import pyarrow as pa

    fields = RunRecord.model_fields
    kinds = {name: "float64" for name in TIMING} | {"deltas": "int64"}
    names = _columns()
    kinds |= {n: _scalar(fields[n].annotation) for n in names if n in fields and n not in NESTED}
    kinds["dollars"] = "string"  # exact decimal text: a string column keeps it exact
    return pa.schema([(name, getattr(pa, kinds.get(name, "string"))()) for name in names])


def _batches(records: Iterable[RunRecord]) -> Iterator[list[dict[str, Any]]]:
    rows = (_as_text(run_row(record)) for record in records)
    while batch := list(islice(rows, BATCH)):
        yield batch


def _parquet(records: Iterable[RunRecord], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KauditError("parquet export needs pyarrow: pip install 'kaudit[parquet]'") from None
    schema = _arrow_schema()
    with _replacing(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
        for batch in _batches(records):
            data = {name: [row[name] for row in batch] for name in schema.names}
            writer.write_table(pa.Table.from_pydict(data, schema=schema))


def _text(records: Iterable[RunRecord], fmt: str, stream: IO[str]) -> None:
    if fmt == "jsonl":
        for record in records:
            stream.write(json.dumps(run_row(record), sort_keys=False) + "\n")
        return
    writer = csv.DictWriter(stream, fieldnames=_columns(), lineterminator="\n")
    writer.writeheader()
    for batch in _batches(records):
        writer.writerows(batch)


def write_export(
    records: Iterable[RunRecord],
    fmt: str,
    out: Path | None,
    stream: IO[str] | None = None,
) -> str | None:
    """Write the rows to `out` (required for parquet), else to `stream`, else return the text.

    Rows are converted and written a batch at a time (see the module docstring).
    """
    if fmt not in EXPORT_FORMATS:
        raise InputError("to", f"names an unknown format {fmt!r}; use {', '.join(EXPORT_FORMATS)}")
    if fmt == "parquet":
        if out is None:
            raise InputError("out", "is required for Parquet, which is not written to stdout")
        _parquet(records, out)
        return None
    if out is not None:
        with _replacing(out) as tmp, tmp.open("w", encoding="utf-8", newline="") as handle:
            _text(records, fmt, handle)
        return None
    if stream is not None:
        _text(records, fmt, stream)
        return None
    buffer = io.StringIO()
    _text(records, fmt, buffer)
    return buffer.getvalue()
