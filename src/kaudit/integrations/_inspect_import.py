"""Inspect AI eval logs -> kaudit ledger records, so kaudit's statistics and reports apply.

A sample scored by `kaudit/suite` carries the run's kaudit record in its score metadata;
the importer keys it by (campaign, the log's model, task, epoch - 1), takes tokens from
Inspect's own usage accounting, and records a sample Inspect could not finish as
INVALID (never counted) with Inspect's error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit._run_key import RunKey
from kaudit._usage import Usage
from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, RunRecord, usage_fields
from kaudit.ledger._record import RunTiming


@dataclass(frozen=True)
class ImportCount:
    """What one import added: records, how many INVALID, and already-present skips."""

    added: int = 0
    invalid: int = 0
    skipped: int = 0


def _record_metadata(sample: Any) -> dict[str, Any] | None:
    for score in (sample.scores or {}).values():
        metadata = score.metadata or {}
        if isinstance(metadata.get("record"), dict):
            return metadata
    return None


def _tokens(sample: Any) -> Usage:
    """The sample's tokens over every model it called (Inspect prices nothing)."""
    usage = (sample.model_usage or {}).values()
    return Usage(sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage))


def sample_record(sample: Any, *, campaign: str, model: str) -> RunRecord:
    """The ledger record of one Inspect sample (one kaudit task, one epoch)."""
    key = RunKey(campaign, model, str(sample.id), int(sample.epoch) - 1)._asdict()
    usage = _tokens(sample)
    found = _record_metadata(sample)
    if found is None:
        error = sample.error.message if sample.error is not None else "no kaudit score"
        return RunRecord(
            **key,
            seed=0,
            status="invalid",
            invalid_reason=f"inspect sample not scored: {error.strip().splitlines()[-1]}",
            termination="errored",
            **usage_fields(usage),
            timing=RunTiming(),
            extra={"source": "inspect_ai"},
        )
    fields = dict(found["record"])
    extra = fields.get("extra", {})  # not a mapping: validation names the field
    extra = extra | {"source": "inspect_ai"} if isinstance(extra, dict) else extra
    tokens = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    return RunRecord.model_validate(fields | key | tokens | {"extra": extra})


def log_records(path: Path, campaign: str | None = None) -> Iterator[tuple[RunRecord, str]]:
    """Each sample of the log at `path` as a record, with the suite digest it was run on.

    The campaign defaults to `inspect:<eval run id>`; the model is Inspect's model name.
    """
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except (OSError, ValueError) as exc:
        raise LedgerError(f"{path}: not a readable Inspect eval log ({exc})") from None
    if log.samples is None:
        raise LedgerError(f"{path}: the Inspect log has no samples")
    name = campaign or f"inspect:{log.eval.run_id}"
    digest = str((log.eval.task_args or {}).get("suite_digest") or "")
    digest = str((log.eval.metadata or {}).get("suite_digest") or digest)
    for sample in log.samples:
        yield sample_record(sample, campaign=name, model=log.eval.model), digest


def import_inspect_logs(
    ledger: Ledger, paths: Iterable[Path], campaign: str | None = None
) -> ImportCount:
    """Append every sample of the logs to `ledger`; records already there are skipped."""
    added = invalid = skipped = 0
    with ledger.writer_lock():
        for path in paths:
            for record, digest in log_records(path, campaign):
                ledger.open_campaign(record.campaign, {"suite_digest": digest, "source": "inspect"})
                if record.key in ledger.finished(record.campaign):
                    skipped += 1
                    continue
                ledger.append(record)
                added += 1
                invalid += record.status == "invalid"
    return ImportCount(added, invalid, skipped)
