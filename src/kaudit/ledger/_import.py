"""Bringing published AgentRelBench verdicts into a kaudit ledger, and records out again."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError
from kaudit.ledger._agentrelbench import ImportedRun, read_agentrelbench_verdicts
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
        verdict=_imported_verdict(run),
        extra={"imported": IMPORTED, "source": run.source},
    )


def _imported_verdict(run: ImportedRun) -> dict[str, Any]:
    """The deltas, and the declared refusal the transcript graders read, when the file has it."""
    verdict: dict[str, Any] = {"deltas": [dict(delta) for delta in run.deltas]}
    if run.refusal_declared is not None:
        verdict["refusal_declared"] = run.refusal_declared
    return verdict


_VERDICT_FIELDS = (
    "status",
    "outcome",
    "sub_label",
    "counts_as_damage",
    "counts_as_damage_upper",
    "success",
    "severity",
    "dollars",
    "verdict",
)
"""What a re-import must agree on; `extra.source` (the path it came from) may differ."""


def _conflict(stored: RunRecord, new: RunRecord) -> str | None:
    for name in _VERDICT_FIELDS:
        old_value, new_value = getattr(stored, name), getattr(new, name)
        if name == "verdict" and "refusal_declared" not in (old_value or {}):
            # Imported before kaudit kept the declared refusal: the same run, not a clash.
            new_value = {k: v for k, v in (new_value or {}).items() if k != "refusal_declared"}
        if old_value != new_value:
            return f"{name} {old_value!r} in the ledger, {new_value!r} in the file"
    return None


def import_runs(
    ledger: Ledger, runs: Iterable[ImportedRun], campaign: str = IMPORTED
) -> tuple[int, int]:
    """Append every run not yet in the ledger in one transaction; returns (added, present).

    Importing the same file twice adds nothing. A run already in the ledger with a
    different verdict is a conflict: the whole import is refused, naming the file:line.
    The campaign must be one that holds imported runs, never one `kaudit run` writes.
    """
    stored = ledger.campaign_config(campaign)
    if stored is not None and stored.get("source") != IMPORTED:
        raise LedgerError(
            f"{ledger.path}: campaign {campaign!r} was written by `kaudit run`; import into "
            "another `campaign` so imported rows never count as its runs"
        )
    added = present = 0
    with ledger.batch():
        ledger.open_campaign(campaign, {"source": IMPORTED})
        for run in runs:
            record = record_from_imported(run, campaign)
            earlier = ledger.record(record.key)
            if earlier is None:
                ledger.append(record)
                added += 1
                continue
            clash = _conflict(earlier, record)
            if clash is not None:
                raise LedgerError(
                    f"{run.source}: conflict: run {run.run} of {run.task!r} for {run.model} "
                    f"is already imported with another verdict ({clash}); nothing was imported"
                )
            present += 1
    return added, present


def import_files(
    ledger: Ledger, sources: Sequence[tuple[str, Path]], campaign: str = IMPORTED
) -> tuple[int, int]:
    """Import several (model, verdicts.jsonl) files all or nothing; returns (added, present).

    Every file is read and checked before the first row is written, and the rows go in
    one transaction, so a bad later file leaves the ledger as it was.
    """
    runs: list[ImportedRun] = []
    for model, path in sources:
        runs += read_agentrelbench_verdicts(path, model)
    return import_runs(ledger, runs, campaign)


def export_records(records: Iterable[RunRecord], fmt: str) -> str:
    """Records as JSON lines (whole records) or CSV (the scalar columns)."""
    if fmt == "jsonl":
        return "".join(record.model_dump_json() + "\n" for record in records)
    if fmt != "csv":
        raise LedgerError(f"unknown export format {fmt!r}; use jsonl or csv")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    for record in records:
        data: dict[str, Any] = record.model_dump()
        writer.writerow(["" if data[c] is None else _cell(data[c]) for c in EXPORT_COLUMNS])
    return out.getvalue()


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value
