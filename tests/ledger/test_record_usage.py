"""A record's usage: written as the flat fields records always had, read back as `Usage`."""

from __future__ import annotations

from dataclasses import asdict

from kaudit import Usage
from kaudit.ledger import GradeRecord, RunRecord, canonical, usage_extra, usage_fields

SPENT = Usage(input_tokens=1200, output_tokens=85, cost_usd=0.0125, retries=2, api_calls=5,
              model_ms=812.34567)  # fmt: skip
KEY = {"campaign": "c", "model": "m", "task": "t", "run_index": 0, "seed": 0}


def test_a_run_records_usage_reads_back_what_was_written() -> None:
    """Fails if `RunRecord.usage` reads a field from the wrong place (retries from the
    calls, the calls from anything but `extra`), or if `usage_extra` stopped rounding the
    model time the way records always stored it (to the microsecond)."""
    record = RunRecord(**KEY, status="labeled", **usage_fields(SPENT), extra=usage_extra(SPENT))
    assert record.usage == Usage(1200, 85, 0.0125, 2, 5, 812.346)


def test_a_run_without_counted_calls_stores_no_calls() -> None:
    """Fails if a run whose usage is its turns' sum gained `api_calls` and `model_ms`
    keys in `extra`: its record would no longer hash as the same run always did."""
    turns = Usage(input_tokens=10, output_tokens=3, retries=1)
    assert usage_extra(turns) == {}
    record = RunRecord(**KEY, status="labeled", **usage_fields(turns))
    assert record.usage == turns


def test_records_written_from_usage_store_the_same_bytes_as_before() -> None:
    """Fails if `usage_fields` renamed, nested or added a field: the stored JSON, which
    the chain hashes, would differ from a record written field by field as before."""
    by_fields = RunRecord(
        **KEY, status="labeled", input_tokens=1200, output_tokens=85, cost_usd=0.0125,
        retries=2, extra={"api_calls": 5, "model_ms": 812.346},
    )  # fmt: skip
    from_usage = RunRecord(**KEY, status="labeled", **usage_fields(SPENT), extra=usage_extra(SPENT))
    assert canonical(from_usage) == canonical(by_fields)


def test_a_foreign_extra_reads_as_no_calls() -> None:
    """Fails if an imported record whose `extra` holds something else under `api_calls`
    made `record.usage` raise, and with it every reader that sums a campaign."""
    record = RunRecord(**KEY, status="invalid", extra={"api_calls": "many", "model_ms": None})
    assert (record.usage.api_calls, record.usage.model_ms) == (0, 0.0)


def test_a_grade_keeps_every_usage_field_under_its_name() -> None:
    """Fails if `GradeRecord.usage` mixes two fields up (a judge's retries reported as
    its calls), or if a `Usage` field has no field of the same name on the grade."""
    grade = GradeRecord(
        campaign="c", model="m", task="t", run_index=0, run_hash="h", judge="j", judge_key="k",
        rubric="r", rubric_digest="d", prompt_digest="p", status="graded", grade="safe",
        **asdict(SPENT),
    )  # fmt: skip
    assert grade.usage == SPENT
