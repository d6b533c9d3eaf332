"""The one-pass reader: the same runs as `Ledger.records`, and nothing unverified counts."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.ledger import Ledger, RunRecord, read_runs
from kaudit.ledger._record import RECORD_VERSION
from kaudit.ledger._summary import run_summaries
from kaudit.ledger._tally import tallies_from_records
from kaudit.report._cells import build_report
from kaudit.report._faults import exposure_summary
from kaudit.report._grading import grade_transcripts
from kaudit.report._mix import cell_mix
from kaudit.spec._faults import FAULT_KINDS
from tests.ledger.conftest import execute, rechain

runner = CliRunner()

KEYS = st.tuples(
    st.sampled_from(["a", "b"]), st.sampled_from(["m1", "m2"]), st.sampled_from(["t1", "t2"])
)
WORDS = st.sampled_from([None, "", "I deleted the row.", "REFUSAL: not allowed", "done"])


@st.composite
def verdicts(draw: st.DrawFn) -> dict[str, Any]:
    """The verdict fields of a labeled run, consistent with each other."""
    outcome = draw(st.sampled_from(["PASS", "FAIL_SAFE", "FAIL_DAMAGE"]))
    damage = outcome == "FAIL_DAMAGE"
    return {
        "outcome": outcome,
        "sub_label": None
        if outcome == "PASS"
        else draw(st.sampled_from(["completed_damage", "refused_but_mutated"]))
        if damage
        else draw(st.sampled_from(["completed_clean", "refused_clean", "errored_clean"])),
        "counts_as_damage": damage,
        "counts_as_damage_upper": damage or draw(st.booleans()),
        "success": outcome == "PASS",
        "severity": draw(st.sampled_from([None, "LOW", "HIGH"])) if damage else None,
        "dollars": draw(st.sampled_from([None, "12.50", "0.10", "1000"])) if damage else None,
        "verdict": draw(st.sampled_from([None, {}, {"refusal_declared": True}, {"x": 1}])),
    }


@st.composite
def run_records(
    draw: st.DrawFn, key: tuple[str, str, str], index: int, attempt: int, last: bool = True
) -> RunRecord:
    """One record of `key`'s run `index` at `attempt`, with extras.

    Labeled or invalid when it is the run's `last` attempt; invalid before (only an
    INVALID run is ever retried).
    """
    campaign, model, task = key
    labeled = draw(st.booleans()) if last else False
    faults = [
        InjectedFault(call=i, call_id=f"c{i}", tool="t", kind=kind, committed=True)
        for i, kind in enumerate(draw(st.lists(st.sampled_from(FAULT_KINDS), max_size=3)))
    ]
    refused = [
        BoundaryAttempt(call=0, call_id="c0", tool="t", table="x", reason="scope")
        for _ in range(draw(st.integers(0, 2)))
    ]
    turns = [{"content": text} for text in draw(st.lists(WORDS, max_size=3))]
    fields = draw(verdicts()) if labeled else {"invalid_reason": "harness error: boom"}
    return RunRecord(
        campaign=campaign,
        model=model,
        task=task,
        run_index=index,
        seed=index,
        status="labeled" if labeled else "invalid",
        attempt=attempt,
        task_digest=draw(st.sampled_from([None, "d1" * 32, "d2" * 32])),
        cost_usd=draw(st.sampled_from([0.0, 0.1, 0.25, 1e-7])),
        extra=draw(st.sampled_from([{}, {"simulated": True}])),
        faults=faults,
        boundary_attempts=refused,
        transcript=turns,
        final_message=draw(WORDS),
        **fields,
    )


@st.composite
def ledgers(draw: st.DrawFn) -> list[RunRecord]:
    """Records in an append order a campaign could produce: retries after their INVALID attempt."""
    pending: list[list[RunRecord]] = []
    for key in draw(st.lists(KEYS, min_size=1, max_size=4)):
        for index in range(draw(st.integers(1, 3))):
            attempts = draw(st.integers(1, 3))
            pending.append(
                [draw(run_records(key, index, a, a == attempts - 1)) for a in range(attempts)]
            )
    out: list[RunRecord] = []
    while pending:
        run = pending[draw(st.integers(0, len(pending) - 1))]
        out.append(run.pop(0))
        pending = [p for p in pending if p]
    return out


def write(directory: Path, records: list[RunRecord]) -> Path:
    path = directory / "l.sqlite"
    with Ledger(path) as ledger:
        for record in records:
            if record.campaign not in ledger.campaigns():
                ledger.open_campaign(record.campaign, {"seed": 0})
            try:
                ledger.append(record)
            except LedgerError:  # the same key and attempt drawn twice: keep the first
                continue
    return path


@settings(max_examples=60, deadline=None)
@given(ledgers())
def test_one_pass_gives_the_same_runs_and_numbers_as_the_records(records: list[RunRecord]) -> None:
    """Every view the report and stats print agrees with the full-record path.

    Fails if the reader keeps the first attempt of a retried run instead of the newest,
    orders runs by their first attempt, ignores the campaign filter, or validates the
    parsed JSON into another record than `Ledger.records` reads from the same bytes.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), records)
        with Ledger(path, readonly=True) as ledger:
            for campaign in (None, "a", "b"):
                full = list(ledger.records(campaign))
                read = read_runs(ledger, campaign)
                assert read.runs == tuple(run_summaries(full))
                assert read.records == ledger.head().records
                assert read.head == ledger.head().head
                assert tallies_from_records(read.runs) == tallies_from_records(full)
                # repr: an empty cell's NaN rate is not equal to itself
                same = repr(build_report(read.runs, 0.05, {"a"}))
                assert same == repr(build_report(full, 0.05, {"a"}))
                assert cell_mix(read.runs) == cell_mix(full)
                assert exposure_summary(read.runs) == exposure_summary(full)
                assert repr(grade_transcripts(read.runs)) == repr(grade_transcripts(full))


def test_an_edited_column_is_caught_by_report_and_stats(ledger_path: Path) -> None:
    """The reader checks every indexed column against the hashed record, as verify does.

    Fails if `read_runs` skipped the column check (e.g. walked the chain unverified).
    """
    execute(ledger_path, "UPDATE runs SET success = 1 - success WHERE seq = 3")
    with Ledger(ledger_path, readonly=True) as ledger, pytest.raises(LedgerError):
        read_runs(ledger)
    for command in (["report"], ["report", "--json"], ["stats"]):
        result = runner.invoke(app, [*command, str(ledger_path)])
        assert result.exit_code == 2, result.output
        assert "record 3: column success is" in result.output
    assert runner.invoke(app, ["report", str(ledger_path), "--no-verify"]).exit_code == 0


def test_a_break_in_another_campaign_still_refuses_the_report(tmp_path: Path) -> None:
    """The whole chain is verified, not only the rows of the campaign asked for.

    Fails if the reader verified only the chosen campaign's rows.
    """
    from tests.ledger.conftest import run_ledger

    path = run_ledger(tmp_path / "l.sqlite", k=2, campaign="first")
    run_ledger(path, k=2, campaign="second")
    execute(
        path, "UPDATE runs SET record = replace(record, '\"seed\":', '\"seed\": ') WHERE seq = 1"
    )
    result = runner.invoke(app, ["report", str(path), "--campaign", "second"])
    assert result.exit_code == 2 and "hash chain broken at record 1" in result.output


def test_a_rechained_record_that_is_not_a_run_record_is_refused(ledger_path: Path) -> None:
    """A consistent chain over a malformed record is still not evidence of a run.

    Fails if the reader took the fields it needs without validating the record.
    """
    version = f'"version":{RECORD_VERSION}'
    execute(ledger_path, f"UPDATE runs SET record = replace(record, '{version}', "
            f"'{version},\"surprise\":1') WHERE seq = 2")  # fmt: skip
    rechain(ledger_path)
    result = runner.invoke(app, ["report", str(ledger_path)])
    assert result.exit_code == 2, result.output
    assert (
        "record 2 is not a run record (surprise: Extra inputs are not permitted)" in result.output
    )


def test_a_record_that_is_not_json_is_named_even_unverified(ledger_path: Path) -> None:
    """With --no-verify the bodies are still parsed; a broken one is named, not a traceback."""
    conn = sqlite3.connect(ledger_path)
    conn.execute("UPDATE runs SET record = '{not json' WHERE seq = 4")
    conn.commit()
    conn.close()
    result = runner.invoke(app, ["stats", str(ledger_path), "--no-verify"])
    assert result.exit_code == 2 and "record 4 is not valid JSON" in result.output
