"""The stored form of a record: orjson where it reads back as `json.dumps` would, else json."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from kaudit.gateway._events import InjectedFault
from kaudit.ledger import RunRecord, canonical
from kaudit.ledger._floats import finite_floats
from kaudit.ledger._record import RunTiming
from tests.ledger.test_parse import JSON, same


def reference(record: RunRecord) -> str:
    """The form every earlier kaudit stored: the standard library's sorted compact JSON."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


FLOATS = st.floats(allow_nan=True, allow_infinity=True)


@st.composite
def records(draw: st.DrawFn) -> RunRecord:
    """Records with any JSON a model or a tool can put in them, and any typed float."""
    return RunRecord(
        campaign=draw(st.text(max_size=4)), model="m", task="t", run_index=0, seed=0,
        status="labeled", outcome="PASS", final_message=draw(st.none() | st.text()),
        transcript=[{"content": draw(st.text()), "tool_calls": draw(JSON)}],
        tool_calls=[{"name": "x", "arguments": draw(JSON), "result": draw(JSON)}],
        extra={draw(st.text(max_size=3)): draw(JSON)}, cost_usd=draw(FLOATS),
        timing=RunTiming(seed_ms=draw(FLOATS), total_ms=draw(FLOATS)),
        faults=[InjectedFault(call=0, call_id="c", tool="x", kind="timeout_after_commit",
                              committed=True)],
    )  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(records())
def test_a_stored_record_reads_back_as_the_standard_library_s_form_does(
    record: RunRecord,
) -> None:
    """Differential against the earlier writer on random records (lone surrogates, integers
    past 64 bits, NaN and infinities among them). Fails if orjson wrote a record whose
    typed float is NaN (as null, which no longer reads back as the record); tried by hand
    by leaving out the `finite_floats` check."""
    assert same(json.loads(canonical(record)), json.loads(reference(record)))


def test_an_ordinary_record_is_written_by_orjson() -> None:
    """Fails if the fast writer is never taken (it writes non-ASCII text as it is, where
    `json.dumps` escapes it) or the key order is not sorted."""
    record = RunRecord(
        campaign="c", model="m", task="t", run_index=0, seed=0, status="labeled",
        final_message="déjà", extra={"b": 1, "a": 2},
    )  # fmt: skip
    text = canonical(record)
    assert '"final_message":"déjà"' in text and text != reference(record)
    assert text.index('"a":2') < text.index('"b":1')
    assert list(json.loads(text)) == sorted(json.loads(text))


def test_a_record_with_a_non_finite_typed_float_is_written_as_json_writes_it() -> None:
    """Fails if a NaN cost or an infinite timing reached orjson (written as null)."""
    nan_cost = RunRecord(campaign="c", model="m", task="t", run_index=0, seed=0,
                         status="invalid", cost_usd=float("nan"))  # fmt: skip
    late = nan_cost.model_copy(update={"cost_usd": 0.0, "timing": RunTiming(total_ms=1e999)})
    assert not finite_floats(nan_cost) and not finite_floats(late)
    assert canonical(nan_cost) == reference(nan_cost) and '"cost_usd":NaN' in canonical(nan_cost)
    assert canonical(late) == reference(late) and '"total_ms":Infinity' in canonical(late)


def test_a_float_inside_a_container_of_another_kind_is_refused_at_once() -> None:
    """Fails if a model whose float sits in a dict or tuple were silently treated as having
    none (its NaN would reach orjson unseen)."""

    class Odd(BaseModel):
        by_name: dict[str, float]

    with pytest.raises(TypeError, match="not supported"):
        finite_floats(Odd(by_name={"x": float("nan")}))
