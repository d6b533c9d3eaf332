"""Reading a ledger as gate evidence: the hash chain is verified before any record counts."""

from __future__ import annotations

from pathlib import Path

from kaudit.errors import LedgerError
from kaudit.gate._gate import Evidence
from kaudit.ledger import Anchor, Ledger, verify_ledger


def ledger_evidence(
    path: Path,
    *,
    model: str | None = None,
    campaign: str | None = None,
    anchor: Anchor | None = None,
    public_key: Path | None = None,
) -> Evidence:
    """The records of `path` (one model's, one campaign's) after verifying its chain.

    With `anchor` (and `public_key`) the anchored record must still be in the chain and
    the anchor's signature valid, as `kaudit ledger verify --head` checks. A broken chain
    or anchor is evidence of nothing: the records are still returned so the decision can
    list what else fails, but the gate will deny. Raises `LedgerError` when `path` is not
    a ledger, and `KauditError` when several models share it and none is chosen (one
    decision is about one agent).
    """
    try:
        verify_ledger(path, anchor, public_key)
        verified, error = True, None
    except LedgerError as exc:
        verified, error = False, str(exc)
    with Ledger(path, readonly=True) as ledger:
        records = list(ledger.records(campaign))
    models = sorted({r.model for r in records})
    if model is None and len(models) > 1:
        raise LedgerError(f"{path}: holds models {', '.join(models)}; choose one with --model")
    if model is not None:
        if model not in models:
            raise LedgerError(f"{path}: no runs of model {model!r}; it holds {', '.join(models)}")
        records = [r for r in records if r.model == model]
    return Evidence(records=records, verified=verified, verify_error=error)
