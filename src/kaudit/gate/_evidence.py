"""Reading a ledger as gate evidence: the hash chain is verified before any record counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import LedgerError
from kaudit.gate._gate import Evidence
from kaudit.ledger import Anchor, Ledger, RunSummary, read_runs
from kaudit.ledger._verify import check_anchor_signature
from kaudit.report import cells_of_campaigns, sequential_campaigns


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
    `public_key`) as `kaudit ledger verify --head` does. A broken chain or anchor is
    evidence of nothing: the runs are still read (unverified) so the decision can list
    what else fails, but the gate will deny. Each run is a `RunSummary`, not the full
    record. Raises `LedgerError` when `path` is not a ledger or holds a row that is not
    a run record, and when several models share it and none is chosen (one decision is
    about one agent).

    How the runs were collected comes from the campaign manifests: the cells of a
    sequentially stopped campaign get the anytime-valid bound, and the suite's task list
    (or, in older manifests, its task count) gives the tasks a campaign left out.
    """
    verified, error = True, None
    with Ledger(path, readonly=True) as ledger:
        try:
            check_anchor_signature(anchor, public_key)
            runs = read_runs(ledger, campaign, anchor=anchor).runs
        except LedgerError as exc:
            verified, error = False, str(exc)
            runs = read_runs(ledger, campaign, verify=False).runs
        names = [campaign] if campaign is not None else ledger.campaigns()
        collected = _collection(ledger, names)
        stopped = sequential_campaigns(names, ledger.manifest)
    chosen = _of_model(path, runs, model)
    return Evidence(
        records=chosen,
        verified=verified,
        verify_error=error,
        sequential=cells_of_campaigns(chosen, stopped),
        suite_tasks=collected.suite_tasks,
        suite_size=collected.suite_size,
    )


@dataclass(frozen=True)
class _Collected:
    suite_tasks: frozenset[str] | None
    suite_size: int | None


def _collection(ledger: Ledger, names: Sequence[str]) -> _Collected:
    """The suite tasks the campaigns drew from: their ids, or only their count, or nothing."""
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


def _of_model(path: Path, runs: tuple[RunSummary, ...], model: str | None) -> list[RunSummary]:
    models = sorted({run.model for run in runs})
    if model is None and len(models) > 1:
        raise LedgerError(f"{path}: holds models {', '.join(models)}; choose one with --model")
    if model is None:
        return list(runs)
    if model not in models:
        raise LedgerError(f"{path}: no runs of model {model!r}; it holds {', '.join(models)}")
    return [run for run in runs if run.model == model]
