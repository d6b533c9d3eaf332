r"""Reading one stored record: its JSON, then its fields, the same way for every reader.

`kaudit ledger verify`, report, stats, the gate, export and resume must never disagree
on what a record says or on whether it is one, so all of them read it here.

The reference reading is `json.loads`, then `RunRecord` validation of the result
(`record_data`, `run_record`). The chain walk first tries a faster one, `summary_view`:
pydantic-core parses and validates the JSON in one pass in Rust, in strict mode, and
keeps of the transcript, the tool calls, the verdict and `extra` only what a
`RunSummary` reads, so their nested dicts are never built as Python objects (about half
the time of the reference on a ledger's records). It only ever answers for records the
reference accepts with the same values (strict mode accepts a subset of what lax
validation does, a JSON value's type and value survive it unchanged, and both parsers
keep the last of two equal keys); anything it refuses goes to the reference reading,
which decides and words the error. `tests/ledger/test_parse.py` checks both claims on
random documents and records. pydantic-core's parser also refuses documents that
`json.loads` reads and kaudit can write (a lone surrogate escape such as ``"\ud800"``
from a model's reply, nesting deeper than 200): those too are read by the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, with_config
from pydantic_core import from_json
from typing_extensions import TypedDict

from kaudit.errors import LedgerError
from kaudit.ledger._record import RunRecord

__all__ = ["SummaryView", "record_data", "run_record", "summary_view", "with_inclusive"]


def record_data(path: Path, seq: int, body: str | bytes) -> dict[str, Any]:
    """The stored JSON of record `seq` as a dict; LedgerError if it is not a JSON object.

    pydantic-core parses first; what it refuses is parsed by `json.loads`, which reads
    every document pydantic-core reads the same way and a few more.
    """
    try:
        data = from_json(body)
    except (ValueError, TypeError):  # TypeError: a column edited to hold a number
        data = _reference_parse(path, seq, body)
    if not isinstance(data, dict):
        raise LedgerError(f"{path}: record {seq} is not a JSON object")
    return data


def _reference_parse(path: Path, seq: int, body: str | bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, TypeError):  # not JSON, bytes that are not UTF-8, not text at all
        raise LedgerError(f"{path}: record {seq} is not valid JSON") from None
    except RecursionError:
        raise LedgerError(f"{path}: record {seq} is nested too deeply to read") from None


def run_record(path: Path, seq: int, data: dict[str, Any]) -> RunRecord:
    """Record `seq` validated as a `RunRecord`; LedgerError naming its first bad field.

    A record without `counts_as_damage_upper` reads it as `counts_as_damage` (the
    inclusive count holds every damage run), as the indexed column is checked against.
    """
    try:
        return RunRecord.model_validate(with_inclusive(data))
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise LedgerError(
            f"{path}: record {seq} is not a run record ({where}: {problem['msg']})"
        ) from None


def with_inclusive(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with `counts_as_damage_upper` derived from `counts_as_damage` when absent.

    Without it a damage record without the field reads as damage but not inclusive
    damage, which verify would accept and every reader's tally refuse.
    """
    if "counts_as_damage_upper" in data:
        return data
    return data | {"counts_as_damage_upper": data.get("counts_as_damage", False)}


# The free-form fields as the view keeps them: a dict of the one key a summary reads (or of
# none), so that any JSON object is one, as for `dict[str, Any]`, and the rest of it is
# parsed but never built as Python objects.
_IGNORE_REST = with_config(ConfigDict(extra="ignore"))


@_IGNORE_REST
class _Object(TypedDict, total=False):
    pass


@_IGNORE_REST
class _Turn(TypedDict, total=False):
    content: Any


@_IGNORE_REST
class _Verdict(TypedDict, total=False):
    refusal_declared: Any


@_IGNORE_REST
class _Extra(TypedDict, total=False):
    simulated: Any
    api_error: Any


_FLAGS = frozenset({"counts_as_damage", "counts_as_damage_upper", "success"})
"""Indexed fields with a default: absent from the JSON, the reference check refuses them."""


class SummaryView(RunRecord):
    """A `RunRecord` whose free-form JSON fields keep only what a summary reads.

    Its own fields are validated strictly (a JSON value of exactly the field's type),
    nested records (faults, boundary attempts, timing) as `RunRecord` validates them.
    The transcript keeps each turn's ``content``, the verdict its ``refusal_declared``,
    `extra` its ``simulated`` and ``api_error``, the tool calls only that each is an
    object: dicts, read the way a `RunRecord`'s are. Never leaves the ledger package:
    a `RunSummary` is built from it and it is dropped.
    """

    model_config = ConfigDict(strict=True)

    verdict: _Verdict | None = None  # type: ignore[assignment]
    transcript: list[_Turn] = Field(default_factory=list)  # type: ignore[assignment]
    tool_calls: list[_Object] = Field(default_factory=list)  # type: ignore[assignment]
    extra: _Extra = Field(default_factory=_Extra)  # type: ignore[assignment]

    def hashed_columns(self) -> tuple[Any, ...]:
        """The record's values of the indexed columns, in `Ledger.rows` order."""
        return (
            self.campaign,
            self.model,
            self.task,
            self.run_index,
            self.attempt,
            self.status,
            self.outcome,
            self.counts_as_damage,
            self.counts_as_damage_upper,
            self.success,
        )


def summary_view(body: str | bytes) -> SummaryView | None:
    """The fast reading of a stored body, or None to read it the reference way.

    None when the body is not strictly a run record, or lacks a flag the indexed
    columns must match. A view's values, indexed columns included, are those the
    reference reading gives.
    """
    try:
        view: SummaryView = _VIEW.validate_json(body)
    except ValidationError:
        return None
    return view if view.__pydantic_fields_set__ >= _FLAGS else None


_VIEW = SummaryView.__pydantic_validator__
