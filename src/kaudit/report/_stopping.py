"""Which stopping rule produced a campaign's run counts, read from its chained records.

A sequential audit's intervals mean something different from a fixed-k audit's, so a
report must say which rule produced its run counts. Each run record carries the rule it
was admitted under (`RunRecord.stopping_rule`), inside the hash chain; the campaign's
manifest sits outside it, so no reader takes a rule, an interval or a line from it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from kaudit.ledger import Ledger, RunRecord, Snapshot, cell_key, open_ledger
from kaudit.ledger._summary import RunSummary
from kaudit.ledger._tally import tallies_from_records
from kaudit.stats import CellKey, CellTally


def stopping_rule_text(manifest: Mapping[str, Any] | None) -> str | None:
    """The rule's sentence ('fixed: k = 8 runs per cell', 'sequential: …'), None if unknown."""
    if not manifest:
        return None
    rule = manifest.get("stopping_rule")
    if isinstance(rule, Mapping) and isinstance(rule.get("text"), str):
        return str(rule["text"])
    k = manifest.get("k")
    return f"fixed: k = {k} runs per cell" if isinstance(k, int) else None


def is_sequential(manifest: Mapping[str, Any] | None) -> bool:
    """Whether the campaign's run counts came from a stopping rule that looked at its runs."""
    rule = (manifest or {}).get("stopping_rule")
    return isinstance(rule, Mapping) and rule.get("kind") == "sequential"


def sequential_campaigns(runs: Iterable[RunRecord | RunSummary]) -> frozenset[str]:
    """The campaigns holding a run admitted by a sequential stopping rule.

    One such run is enough: a rule that looked at the data makes the campaign's fixed-k
    intervals wrong, and a later record claiming a fixed rule cannot undo it.
    """
    return frozenset(run.campaign for run in runs if run.sequential)


def stopping_rules(runs: Iterable[RunRecord | RunSummary]) -> dict[str, str]:
    """Each campaign's stopping rule sentence, from its last run that records one."""
    rules: dict[str, str] = {}
    for run in runs:
        text = run.stopping_rule if isinstance(run, RunSummary) else None
        if isinstance(run, RunRecord):
            text = stopping_rule_text({"stopping_rule": run.stopping_rule})
        if text is not None:
            rules[run.campaign] = text
    return rules


def cells_of_campaigns(
    runs: Iterable[RunRecord | RunSummary], campaigns: Collection[str]
) -> frozenset[CellKey]:
    """The cells (`CellKey`) holding a run of one of `campaigns`.

    By key, not by name: a task run in two versions is two cells (``task@digest8``),
    and only the one a sequential campaign stopped gets its anytime-valid interval.
    """
    return frozenset(cell_key(r) for r in runs if r.campaign in campaigns)


def sequential_cells(path: Path) -> frozenset[CellKey]:
    """The cells holding a run of a sequentially stopped campaign in a ledger."""
    with open_ledger(path) as snapshot:
        runs = snapshot.runs()
    return cells_of_campaigns(runs, sequential_campaigns(runs))


def chained_rule(ledger: Ledger | Snapshot, campaign: str) -> dict[str, Any]:
    """A manifest-shaped `{"stopping_rule": …}` read from the campaign's first run record.

    The rule in the record is inside the hash chain; the manifest's copy is not.
    """
    records = (
        ledger.full_records(campaign) if isinstance(ledger, Snapshot) else ledger.records(campaign)
    )
    for record in records:
        return {"stopping_rule": record.stopping_rule}
    return {}


def guaranteed_runs(manifest: Mapping[str, Any] | None) -> int | None:
    """Counted runs every cell of a sequential campaign gets whatever its outcomes.

    The rule cannot stop a cell before this many counted runs: 1 when it stops at the
    first damage run; otherwise the first n at which even an all-clean cell's
    anytime-valid upper bound is below the target (capped at the maximum k), by the
    bound the rule names: one-sided at alpha/2 (`shown_below`, as the gate), or, in a
    record without "bound", the two-sided confidence sequence earlier rules used. Those
    first runs are a fixed-n sample, so the unbiased estimators hold on them. None for a
    campaign that is not sequential.
    """
    rule = (manifest or {}).get("stopping_rule")
    if not is_sequential(manifest) or not isinstance(rule, Mapping):
        return None
    max_k = int(rule.get("max_k") or 1)
    if rule.get("on_damage"):
        return 1
    target = rule.get("upper_below")
    if not isinstance(target, int | float):
        return max_k
    from kaudit.stats import beta_binomial_cs, shown_below

    alpha = float(rule.get("alpha") or 0.05)
    for n in range(1, max_k):
        if "bound" in rule and shown_below(0, n, target, alpha / 2):
            return n
        if "bound" not in rule and beta_binomial_cs(0, n, alpha)[1] < target:
            return n
    return max_k


def fixed_prefix_tallies(
    runs: Iterable[RunRecord | RunSummary], prefix: Mapping[str, int]
) -> list[CellTally]:
    """Tallies over the first ``prefix[campaign]`` counted runs (by run index) of each cell.

    Cells of campaigns not in ``prefix`` keep all their runs; a cell with fewer counted
    runs than its prefix is left out (it was not stopped by the rule, e.g. interrupted).
    """
    by_cell: dict[tuple[str, str, str | None], list[RunRecord | RunSummary]] = {}
    for r in runs:
        by_cell.setdefault((r.model, r.task, r.task_digest), []).append(r)
    kept: list[RunRecord | RunSummary] = []
    for cell in by_cell.values():
        limits = [prefix[r.campaign] for r in cell if r.campaign in prefix]
        if not limits:
            kept += cell
            continue
        counted = sorted((r for r in cell if r.status == "labeled"), key=lambda r: r.run_index)
        if len(counted) >= min(limits):
            kept += counted[: min(limits)]
    return tallies_from_records(kept)
