r"""Reading one stored record: its JSON, then its fields, the same way for every reader.

`kaudit ledger verify`, report, stats, the gate, export and resume must never disagree
on what a record says or on whether it is one, so all of them read it here.

The JSON fast path is pydantic-core's parser (Rust; about half the time of `json.loads`
on a ledger's records). It refuses two kinds of documents that `json.loads` reads and
kaudit can write: a lone surrogate escape such as ``"\ud800"`` (a model's reply may hold
one) and nesting deeper than 200. Those go to `json.loads`, the reference reading: on
every document both accept they give equal values (duplicate keys: the last one wins in
both), which `tests/ledger/test_parse.py` checks on random documents.
"""

from __future__ import annotations

import json
from itertools import repeat
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_core import from_json

from kaudit.errors import LedgerError
from kaudit.ledger._record import RunRecord

__all__ = ["record_data", "run_record", "summary_fields"]


def record_data(path: Path, seq: int, body: str | bytes) -> dict[str, Any]:
    """The stored JSON of record `seq` as a dict; LedgerError if it is not a JSON object."""
    try:
        data = from_json(body)
    except ValueError:
        data = _reference_parse(path, seq, body)
    if not isinstance(data, dict):
        raise LedgerError(f"{path}: record {seq} is not a JSON object")
    return data


def _reference_parse(path: Path, seq: int, body: str | bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:  # JSONDecodeError, or bytes that are not UTF-8
        raise LedgerError(f"{path}: record {seq} is not valid JSON") from None
    except RecursionError:
        raise LedgerError(f"{path}: record {seq} is nested too deeply to read") from None


def run_record(path: Path, seq: int, data: dict[str, Any]) -> RunRecord:
    """Record `seq` validated as a `RunRecord`; LedgerError naming its first bad field."""
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise LedgerError(
            f"{path}: record {seq} is not a run record ({where}: {problem['msg']})"
        ) from None


class _AsParsed(RunRecord):
    """`RunRecord` with its four free-form JSON fields kept as parsed instead of copied.

    Validating them as `dict[str, Any]` / `list[dict[str, Any]]` copies every nested
    dict and list of the transcript, the tool calls and the verdict, most of a record's
    bytes; `_free_form_ok` checks the same shapes on the parsed values instead. Never
    leaves this module: a `RunSummary` is built from it and it is dropped.
    """

    verdict: Any = None
    transcript: Any = Field(default_factory=list)
    tool_calls: Any = Field(default_factory=list)
    extra: Any = Field(default_factory=dict)


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(map(isinstance, value, repeat(dict)))


def _free_form_ok(record: _AsParsed) -> bool:
    """What `RunRecord` accepts in those four fields of parsed JSON (keys are always str)."""
    verdict = record.verdict
    return (
        (verdict is None or isinstance(verdict, dict))
        and isinstance(record.extra, dict)
        and _objects(record.transcript)
        and _objects(record.tool_calls)
    )


def summary_fields(path: Path, seq: int, data: dict[str, Any]) -> RunRecord:
    """Record `seq` checked exactly as `run_record` checks it, for building a summary.

    Accepts and refuses the same records as `run_record`, with the same message (any
    doubt falls back to `run_record` itself), but the free-form fields of the result
    are the parsed values themselves: read them, never keep the result.
    """
    try:
        record = _AsParsed.model_validate(data)
    except ValidationError:
        return run_record(path, seq, data)  # raises: RunRecord is at least as strict
    return record if _free_form_ok(record) else run_record(path, seq, data)
