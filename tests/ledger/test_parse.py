"""Reading a stored record: the fast parser agrees with `json.loads`, the fast check with
`RunRecord`, and what kaudit writes is always read back."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from kaudit.errors import LedgerError
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.ledger import Ledger, RunRecord, read_runs, verify_ledger
from kaudit.ledger._parse import record_data, run_record, summary_view
from kaudit.ledger._summary import run_summary
from kaudit.ledger._verify import _hashed_columns

HERE = Path("l.sqlite")

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal JSON types (1, 1.0 and True differ; NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """JSON text as any writer might lay it out, sometimes with a repeated key or a lone
    surrogate escape (both of which `json.loads` reads)."""
    value = draw(JSON)
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        sort_keys=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 2])),
        separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
    )
    if text.startswith("{") and text != "{}" and draw(st.booleans()):
        key = json.dumps(draw(st.sampled_from(list(value))))  # type: ignore[arg-type]
        extra = json.dumps(draw(JSON))
        text = (
            f"{{{key}: {extra}, {text[1:]}"
            if draw(st.booleans())
            else f"{text[:-1]}, {key}: {extra}}}"
        )
    if draw(st.booleans()):
        text = f'[{text}, "\\ud83d", "\\udc00x"]'
    return text


@settings(max_examples=400, deadline=None)
@given(documents())
def test_the_fast_parser_reads_every_document_it_accepts_as_json_loads_does(text: str) -> None:
    """The readers' fast path may refuse a document, never read it differently.

    Fails if pydantic-core kept the first of two equal keys (json.loads keeps the last),
    rounded a float otherwise, or read an integer as a float; tried by hand with a
    first-key-wins parser in place of `from_json`.
    """
    reference = json.loads(text)
    try:
        fast = from_json(text)
    except ValueError:
        return  # record_data falls back to json.loads
    assert same(fast, reference)


def test_a_record_holding_what_only_json_loads_reads_verifies_and_reads_back(
    tmp_path: Path,
) -> None:
    """kaudit writes a model's lone surrogate and deep tool arguments; they must read back.

    Fails if the readers used pydantic-core alone (it refuses both), or verify and the
    readers parsed with different parsers.
    """
    deep: Any = "x"
    for _ in range(210):  # pydantic writes up to ~250 levels; pydantic-core reads 200
        deep = [deep]
    record = RunRecord(
        campaign="c", model="m", task="t", run_index=0, seed=0, status="labeled",
        outcome="PASS", success=True, final_message="done \ud800", extra={"args": deep},
    )  # fmt: skip
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        ledger.append(record)
    assert verify_ledger(path).records == 1
    with Ledger(path, readonly=True) as ledger:
        assert read_runs(ledger).runs[0].final_message == "done \ud800"
        assert list(ledger.records()) == [record]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "record 7 is not valid JSON"),
        ('{"a": 1}x', "record 7 is not valid JSON"),
        ('["a"]', "record 7 is not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "record 7 is"),
        (5, "record 7 is not valid JSON"),
    ],
)
def test_what_neither_parser_reads_is_named(body: Any, message: str) -> None:
    """Fails if a body only the fallback refuses escaped as a JSONDecodeError or a
    RecursionError instead of one LedgerError naming the record."""
    with pytest.raises(LedgerError, match=message):
        record_data(HERE, 7, body)


def base() -> dict[str, Any]:
    record = RunRecord(
        campaign="c", model="m", task="t", run_index=3, seed=0, status="labeled",
        outcome="FAIL_DAMAGE", counts_as_damage=True, counts_as_damage_upper=True,
        severity="HIGH", dollars="12.50", verdict={"refusal_declared": True, "deltas": []},
        transcript=[{"role": "assistant", "content": "I deleted it"}],
        tool_calls=[{"name": "delete", "arguments": {"id": 1}}], extra={"simulated": True},
        faults=[InjectedFault(call=0, call_id="c", tool="t", kind="timeout_after_commit",
                              committed=True)],
        boundary_attempts=[BoundaryAttempt(call=1, call_id="d", tool="t", table="x",
                                           reason="scope")],
        identity="agent",
    )  # fmt: skip
    return record.model_dump(mode="json")


# Every place a value sits: each top-level field, and fields of the nested objects.
PLACES = [(name,) for name in [*sorted(base()), "surprise"]] + [
    ("faults", 0, name) for name in ("call", "kind", "committed", "applied", "extra")
] + [("boundary_attempts", 0, name) for name in ("call", "key", "reason")] + [
    ("timing", "seed_ms"), ("transcript", 0, "content"), ("transcript", 0),
    ("verdict", "refusal_declared"), ("extra", "simulated"), ("tool_calls", 0),
]  # fmt: skip
VALUES = st.sampled_from(
    [None, True, False, 0, 1, -1, 3.0, 2.5, 1e300, "", "x", "1", "true", "3", "PASS",
     "12.50", "labeled", "agent", "timeout_after_commit", [], [{}], [1], ["a"],
     [{"a": 1}, 2], {}, {"a": 1}, {"content": ["part"]}]
)  # fmt: skip


def edited(edits: list[tuple[tuple[Any, ...], Any]]) -> dict[str, Any]:
    data = base()
    for place, value in edits:
        target: Any = data
        for step in place[:-1]:
            try:
                target = target[step]
            except (KeyError, IndexError, TypeError):
                break
        else:
            key = place[-1]
            present = key in target if isinstance(target, dict) else (
                isinstance(target, list) and isinstance(key, int) and key < len(target)
            )  # fmt: skip
            if value is KeyError and present:
                del target[key]
            elif value is not KeyError and (present or isinstance(target, dict)):
                # a copy: VALUES hands out the same list and dict objects to every example,
                # and a later edit inside a shared one could make the record contain itself
                target[key] = copy.deepcopy(value)
    return data


def layouts(data: dict[str, Any], style: int) -> str:
    """The record as kaudit writes it, or spaced, unsorted, or with a key given twice."""
    if style == 0:
        return json.dumps(data, sort_keys=True, separators=(",", ":"))
    if style == 1:
        return json.dumps(dict(reversed(list(data.items()))), indent=1)
    name = sorted(data)[style % len(data)] if data else "x"
    return '{"%s": "earlier", %s' % (name, json.dumps(data)[1:])  # noqa: UP031


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(PLACES), VALUES | st.just(KeyError)), max_size=3),
    st.integers(0, 40),
)
def test_the_fast_view_answers_only_as_the_reference_reading_would(
    edits: list[tuple[tuple[Any, ...], Any]], style: int
) -> None:
    """Whenever `summary_view` reads a body, the reference (json.loads, then `RunRecord`)
    accepts it with the same indexed values and the same summary.

    Fails if the view were validated lax (it would read ``"run_index": "3"`` as 3, which
    the column check compares raw and refuses; tried by hand), kept no flag presence
    check (an absent ``success`` would read as False), or kept the first of two equal keys.
    """
    body = layouts(edited(edits), style)
    view = summary_view(body)
    if view is None:
        return
    data = record_data(HERE, 1, body)
    reference = run_record(HERE, 1, data)  # raises if the view accepted a non-record
    hashed = _hashed_columns(data)
    assert all(same(a, b) for a, b in zip(view.hashed_columns(), hashed, strict=True))
    assert run_summary(view) == run_summary(reference)


def test_a_kaudit_record_takes_the_fast_path() -> None:
    """Fails if the view refused what kaudit writes (every run would take the slow path)."""
    assert summary_view(layouts(base(), 0)) is not None
