"""Reading a ledger as gate evidence: the hash chain is verified before any record counts."""

from __future__ import annotations

from pathlib import Path

from kaudit.errors import LedgerError
from kaudit.gate._gate import Evidence
from kaudit.ledger import Anchor, Ledger, RunSummary, read_runs
from kaudit.ledger._verify import check_anchor_signature


def ledger_evidence(
    path: Path,
    *,
    model: str | None = None,
    campaign: str | None = None,
    anchor: Anchor | None = None,
    public_key: Path | None = None,
) -> Evidence:
    """The runs of `path` (one model's, one campaign's), read in the pass that verifies it.

    The chain is checked as `kaudit ledger verify` checks it, with `anchor` (and
    `public_key`) as `kaudit ledger verify --head` does; records after the anchor are
    not part of the evidence. A broken chain or anchor is
    evidence of nothing: the runs are still read (unverified) so the decision can list
    what else fails, but the gate will deny. Each run is a `RunSummary`, not the full
    record. Raises `LedgerError` when `path` is not a ledger or holds a row that is not
    a run record, and when several models share it and none is chosen (one decision is
    about one agent).
    """
    verified, error = True, None
    with Ledger(path, readonly=True) as ledger:
        try:
            check_anchor_signature(anchor, public_key)
            read = read_runs(ledger, campaign, anchor=anchor)
        except LedgerError as exc:
            verified, error = False, str(exc)
            read = read_runs(ledger, campaign, verify=False)
    return Evidence(
        records=_of_model(path, read.runs, model),
        verified=verified,
        verify_error=error,
        chain_records=read.records,
        anchored_records=read.anchored_records,
    )


def _of_model(path: Path, runs: tuple[RunSummary, ...], model: str | None) -> list[RunSummary]:
    models = sorted({run.model for run in runs})
    if model is None and len(models) > 1:
        raise LedgerError(f"{path}: holds models {', '.join(models)}; choose one with --model")
    if model is None:
        return list(runs)
    if model not in models:
        raise LedgerError(f"{path}: no runs of model {model!r}; it holds {', '.join(models)}")
    return [run for run in runs if run.model == model]
