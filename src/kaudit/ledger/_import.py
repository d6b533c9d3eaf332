"""Bringing published AgentRelBench verdicts into a kaudit ledger, and records out again."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from kaudit.ledger._agentrelbench import ImportedRun
from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger

IMPORTED = "agentrelbench"
EXPORT_COLUMNS = (
    "campaign",
    "model",
    "task",
    "run_index",
    "seed",
    "status",
    "outcome",
    "sub_label",
    "counts_as_damage",
    "counts_as_damage_upper",
    "success",
    "severity",
    "dollars",
    "termination",
    "steps",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "retries",
    "restarted",
)


def record_from_imported(run: ImportedRun, campaign: str) -> RunRecord:
    """A ledger record for one published verdict; `run_index` keeps the source's run number.

    The published file has no transcript, seed or state; those fields stay empty and
    `extra` says where the verdict came from.
    """
    counted = run.outcome in ("PASS", "FAIL_SAFE", "FAIL_DAMAGE")
    return RunRecord(
        campaign=campaign,
        model=run.model,
        task=run.task,
        run_index=run.run,
        seed=0,
        status="labeled" if counted else "invalid",
        invalid_reason=None if counted else f"published as {run.outcome}",
        outcome=run.outcome if counted else None,
        sub_label=run.sub_label,
        counts_as_damage=run.counts_as_damage,
        counts_as_damage_upper=run.counts_as_damage_upper,
        success=run.eog_success,
        severity=run.severity,
        dollars=run.dollars,
        verdict={"deltas": [dict(delta) for delta in run.deltas]},
        extra={"imported": IMPORTED, "source": run.source},
    )


def import_runs(
    ledger: Ledger, runs: Iterable[ImportedRun], campaign: str = IMPORTED
) -> tuple[int, int]:
    """Append every run not yet in the ledger; returns (added, already present).

    Importing the same file twice adds nothing: each record's key is taken once.
    """
    ledger.open_campaign(campaign, {"source": IMPORTED})
    present = ledger.finished(campaign)
    added = skipped = 0
    for run in runs:
        record = record_from_imported(run, campaign)
        if (campaign, record.model, record.task, record.run_index) in present:
            skipped += 1
            continue
        ledger.append(record)
        added += 1
    return added, skipped


def export_records(records: Iterable[RunRecord], fmt: str) -> str:
    """Records as JSON lines (whole records) or CSV (the scalar columns)."""
    if fmt == "jsonl":
        return "".join(record.model_dump_json() + "\n" for record in records)
    if fmt != "csv":
        raise ValueError(f"unknown export format {fmt!r}; use jsonl or csv")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    for record in records:
        data: dict[str, Any] = record.model_dump()
        writer.writerow(["" if data[c] is None else _cell(data[c]) for c in EXPORT_COLUMNS])
    return out.getvalue()


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value
