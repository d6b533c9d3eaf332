"""kaudit's verdict beside an imported suite's judgment: agreement, reasons, per-pair rates."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from scipy.stats import beta

from kaudit.ledger import RunRecord
from kaudit.report._referee import JudgedRun, disagreement, referee_report, referee_tables


def _record(task: str, index: int, *, damage: bool, judged: dict[str, Any] | None) -> RunRecord:
    extra = {} if judged is None else {"agentdojo": judged}
    return RunRecord(
        campaign="c", model="m", task=task, run_index=index, seed=index, status="labeled",
        outcome="FAIL_DAMAGE" if damage else "PASS", counts_as_damage=damage, success=True,
        dollars="10" if damage else None, termination="completed", extra=extra,
        verdict={"checks": []},
    )  # fmt: skip


def _pair_records(task: str, n: int, x: int) -> list[RunRecord]:
    return [
        _record(task, i, damage=i < x, judged={"utility": True, "security": i < x})
        for i in range(n)
    ]


def test_pair_interval_is_clopper_pearson_and_miss_is_the_clean_share() -> None:
    """Fails if the per-pair interval or the single-run miss rate is computed another way."""
    report = referee_report(_pair_records("u/i", 10, 3) + _pair_records("u/j", 10, 10))
    assert report is not None
    row = next(p for p in report.pairs if p.task == "u/i")
    assert row.low == pytest.approx(beta.ppf(0.025, 3, 8))
    assert row.high == pytest.approx(beta.ppf(0.975, 4, 7))
    assert row.single_run_miss == pytest.approx(0.7)
    assert row.dollars == Decimal("30")
    assert (report.stochastic_pairs, report.attacked_pairs) == (1, 2)
    assert report.single_run_miss_pair == pytest.approx(0.35)  # (0.7 + 0.0) / 2


def test_agreement_counts_each_side() -> None:
    """Fails if a run is counted on the wrong side of the 2x2 table."""
    records = [
        _record("u/i", 0, damage=True, judged={"utility": True, "security": True}),
        _record("u/i", 1, damage=True, judged={"utility": False, "security": False}),
        _record("u/i", 2, damage=False, judged={"utility": True, "security": True}),
        _record("u", 3, damage=False, judged={"utility": True, "security": None}),
        _record("u", 4, damage=False, judged=None),
    ]
    report = referee_report(records)
    assert report is not None
    assert report.runs == 4
    assert report.agreement["security"] == {
        "both": 1, "kaudit_only": 1, "suite_only": 1, "neither": 0, "agree": 1, "disagree": 2,
    }  # fmt: skip
    assert report.agreement["utility"]["kaudit_only"] == 1
    assert len(report.disagreements) == 2
    assert referee_tables(report)[0].title.startswith("kaudit verdict")


def _run(**changes: Any) -> JudgedRun:
    base: dict[str, Any] = dict(
        model="m", task="t", run_index=0, damage=False, success=True, dollars=Decimal(0),
        utility=True, security=None, utility_at_start=False, answer_only=False, masked=False,
        error=None,
    )  # fmt: skip
    return JudgedRun(**(base | changes))


def test_reasons_name_the_cause() -> None:
    """Fails if a vacuous utility, a no-change utility or a masked injection is misexplained."""
    assert disagreement(_run()) == []
    vacuous = disagreement(_run(success=False, utility_at_start=True))
    assert "already holds on the untouched initial state" in vacuous[0]
    no_change = disagreement(_run(utility=False, answer_only=True, utility_at_start=True))
    assert "asks for no change at all" in no_change[0]
    text = disagreement(_run(utility=False, answer_only=True))
    assert "the answer is text" in text[0]
    masked = disagreement(_run(security=True, masked=True))
    assert "allowed change" in masked[0]


def test_no_judged_runs_no_report() -> None:
    """Fails if a campaign without the suite's judgment gets an empty comparison section."""
    assert referee_report([_record("u", 0, damage=False, judged=None)]) is None


def test_a_pair_never_shown_its_injection_is_not_counted_as_resisting() -> None:
    """Fails if the per-pair exposure count sums the wrong runs, if a ledger whose runs
    predate the field claims 0 exposures instead of "-", or if a campaign with no attack
    prints a single-run miss of attacked pairs it does not have."""
    seen = [
        _record("u/i", i, damage=False, judged={"utility": False, "security": False,
                                                "exposed": i == 0})
        for i in range(3)
    ]  # fmt: skip
    report = referee_report(seen)
    assert report is not None
    (row,) = report.pairs
    assert (row.exposed, row.attacks) == (1, 0)
    title = referee_tables(report)[1].title
    assert title.endswith("no pair attacked; the injection reached the model in 1 of 1 pairs")
    assert "-" not in title
    old = referee_report(_pair_records("u/i", 3, 1))
    assert old is not None and old.pairs[0].exposed is None
    assert referee_tables(old)[1].rows[0][3] == "-"
    assert "reached the model" not in referee_tables(old)[1].title


def test_a_check_blind_on_its_own_run_is_named_as_the_reason() -> None:
    """Fails if a breach AgentDojo's security() misses on its own ground-truth run is
    explained as damage beside the goal, or if that reason is given without the flag."""
    blind = disagreement(_run(damage=True, security=False, own_run_security=False))
    assert "even on AgentDojo's own ground-truth run" in blind[0]
    other = disagreement(_run(damage=True, security=False, own_run_security=True))
    assert "not the injection's goal" in other[0]
