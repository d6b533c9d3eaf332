"""`RunKey`: a run's identity, equal to the tuple the ledger reads back."""

from __future__ import annotations

from kaudit import RunKey
from tests.report.conftest import make_record


def test_a_key_equals_the_tuple_read_from_the_ledger_columns() -> None:
    """Fails if RunKey stops being a plain tuple: `Ledger.latest` keys read from SQLite
    and keys built by the campaign would then miss each other, and a resumed campaign
    would run every finished run again."""
    key = RunKey("c", "m", "t", 3)
    assert key == ("c", "m", "t", 3)
    assert {("c", "m", "t", 3): "found"}[key] == "found"


def test_the_run_id_names_each_part_in_order() -> None:
    """Fails if the run id (what a sandbox, an agent and a serving stack's logs know the
    run by) drops or reorders a part."""
    assert RunKey("c", "openai:gpt", "billing/x", 7).run_id == "c/openai:gpt/billing/x/7"


def test_a_record_gives_back_the_key_it_was_filed_under() -> None:
    """Fails if `RunRecord.key` mixes up its fields (a grade or a referee's judgment
    would then attach to another run)."""
    record = make_record("billing/x", 4)
    assert record.key == RunKey(record.campaign, record.model, "billing/x", 4)
    assert record.key._asdict() == {
        "campaign": record.campaign, "model": record.model, "task": "billing/x", "run_index": 4,
    }  # fmt: skip
