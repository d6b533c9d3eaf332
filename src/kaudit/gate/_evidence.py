"""Reading a ledger as gate evidence: the hash chain is verified before any record counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import InputError, LedgerError
from kaudit.gate._gate import Evidence
from kaudit.ledger import Anchor, Snapshot, open_ledger
from kaudit.ledger._sign import load_public_key
from kaudit.ledger._summary import RunSummary
from kaudit.report._stopping import cells_of_campaigns, sequential_campaigns


def ledger_evidence(
    path: Path | Snapshot,
    *,
    model: str | None = None,
    campaign: str | None = None,
    anchor: Anchor | None = None,
    public_key: Path | None = None,
) -> Evidence:
    """The runs of a ledger (one model's, one campaign's), as its one verified read saw them.

    `path` is a ledger file, opened with `kaudit.open(..., lenient=True)` (with `anchor`
    and `public_key` as `kaudit ledger verify --head` takes them), or a snapshot opened
    that way. A broken chain or anchor is evidence of nothing: the runs are still read
    (unverified) so the decision can list what else fails, but the gate will deny.
    Records after the anchor are not part of the evidence. Raises `LedgerError` when
    `path` is not a ledger or holds a row that is not a run record, when `public_key`
    holds no ed25519 key, and when several models share it and none is chosen (one
    decision is about one agent).

    How the runs were collected comes from the campaign manifests: a sequentially stopped
    campaign's cells are flagged as such (every cell gets the anytime-valid bound), and
    the suite's task list
    (or, in older manifests, its task count) gives the tasks a campaign left out.
    """
    if isinstance(path, Snapshot):
        return _evidence(path, model, campaign)
    if public_key is not None:  # an unreadable key is the caller's mistake, not evidence
        if anchor is None:
            raise InputError("pubkey", "needs `head`: a signature is checked on an anchor")
        load_public_key(public_key)
    with open_ledger(path, head=anchor, pubkey=public_key, lenient=True) as snapshot:
        return _evidence(snapshot, model, campaign)


def _evidence(snapshot: Snapshot, model: str | None, campaign: str | None) -> Evidence:
    snapshot.require_campaign(campaign)
    verified, error = snapshot.verified, snapshot.verify_error
    runs = snapshot.runs(campaign)
    # Campaigns named by chained runs too: deleting a campaign row must not hide one.
    names = [campaign] if campaign is not None else _campaigns(snapshot, runs)
    collected = _collection(snapshot, names)
    # Evidence that failed its check is refused whatever it holds: asking to choose among
    # models a forger may have named would hide the refusal behind a usage error.
    if verified:
        chosen = _of_model(snapshot.path, runs, model)
    else:
        chosen = [run for run in runs if model is None or run.model == model]
    return Evidence(
        records=chosen,
        verified=verified,
        verify_error=error,
        sequential=cells_of_campaigns(chosen, sequential_campaigns(runs)),
        suite_tasks=collected.suite_tasks,
        suite_size=collected.suite_size,
        chain_records=snapshot.records,
        anchored_records=snapshot.anchored_records,
    )


@dataclass(frozen=True)
class _Collected:
    suite_tasks: frozenset[str] | None
    suite_size: int | None


def _collection(ledger: Snapshot, names: Sequence[str]) -> _Collected:
    """The suite tasks the campaigns drew from: their ids, or only their count, or nothing.

    The ids come from each campaign's manifest, which is outside the hash chain; the
    verified read (`kaudit.open`) refuses a manifest whose list does not hash to what its
    campaign's runs chained, so on verified evidence the list is the one the runs drew from.
    """
    tasks: set[str] = set()
    size = 0
    named = counted = False
    for name in names:
        manifest = ledger.manifest(name) or {}
        listed = manifest.get("suite_tasks")
        if isinstance(listed, list):
            tasks |= {str(task) for task in listed}
            named = True
            continue
        suite = manifest.get("suite")
        if isinstance(suite, dict) and isinstance(suite.get("tasks"), int):
            size, counted = max(size, suite["tasks"]), True
    if named:
        return _Collected(frozenset(tasks), None)
    return _Collected(None, size if counted else None)


def _campaigns(snapshot: Snapshot, runs: Sequence[RunSummary]) -> list[str]:
    return sorted(set(snapshot.stored_campaigns) | {run.campaign for run in runs})


def _of_model(path: Path, runs: Sequence[RunSummary], model: str | None) -> list[RunSummary]:
    models = sorted({run.model for run in runs})
    if model is None and len(models) > 1:
        raise LedgerError(f"{path}: holds models {', '.join(models)}; choose one with `model`")
    if model is None:
        return list(runs)
    if model not in models:
        raise LedgerError(f"{path}: no runs of model {model!r}; it holds {', '.join(models)}")
    return [run for run in runs if run.model == model]
