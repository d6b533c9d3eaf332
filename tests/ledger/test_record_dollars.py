"""A record's priced damage is a finite decimal, or the record is not a run record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.report.conftest import make_record


@pytest.mark.parametrize("text", ["", "ten", "NaN", "Infinity", "1,000"])
def test_dollars_that_no_reader_can_sum_are_refused(text: str) -> None:
    """Fails if a re-chained record with dollars "" passed `ledger verify` and then made
    `kaudit report` crash on `Decimal("")` (found by the readers-agree property test)."""
    record = make_record("t", 0, damage=True)
    with pytest.raises(ValidationError, match="not a finite decimal amount"):
        type(record).model_validate(record.model_dump() | {"dollars": text})


def test_decimal_text_and_version_one_numbers_are_kept_exactly() -> None:
    """Fails if the check rewrote a valid amount (its exact text is what the chain hashes)."""
    record = make_record("t", 0, damage=True)
    for given, kept in (("1868.50", "1868.50"), (12.5, "12.5"), (3, "3"), (None, None)):
        assert type(record).model_validate(record.model_dump() | {"dollars": given}).dollars == kept
