"""The numbers a report's sections share, each made once."""

from __future__ import annotations

from kaudit.ledger._summary import run_summary
from kaudit.report._derived import Derived
from kaudit.report._economics import economics
from kaudit.report._grading import grade_transcripts
from kaudit.report._mix import cell_mix
from tests.report.conftest import make_record


def _runs() -> list:
    records = [
        make_record(task, i, damage=i % 3 == 0, dollars=10.0 * i)
        for task in ("a", "b")
        for i in range(6)
    ]
    return [run_summary(r) for r in records]


def test_each_value_is_made_once_and_keyed_by_every_argument() -> None:
    """Bug caught: a memo keyed on too little (the terminal's seed or alpha served the
    page's numbers) or on nothing at all (each section making its own again)."""
    runs = _runs()
    derived = Derived(runs)
    first = derived.economics(alpha=0.05, seed=0)
    assert derived.economics(alpha=0.05, seed=0) is first
    assert first == economics(runs, alpha=0.05, seed=0)
    for other in ({"alpha": 0.1}, {"seed": 1}, {"bootstrap": 100}, {"detect": 0.9},
                  {"loading": 1.0}):  # fmt: skip
        assert derived.economics(**other) is not first  # type: ignore[arg-type]
    assert derived.economics(alpha=0.1) == economics(runs, alpha=0.1)
    assert derived.mix() is derived.mix() and derived.mix() == cell_mix(runs)
    assert derived.grading() is derived.grading() and derived.grading() == grade_transcripts(runs)
