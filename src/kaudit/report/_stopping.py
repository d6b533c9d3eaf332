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

from kaudit.ledger import Ledger, RunRecord, RunSummary
from kaudit.stats import CellKey


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
    """The (model, task, task digest) cells holding a run of one of `campaigns`.

    By digest, not by name: a task run in two versions is two cells (``task@digest8``),
    and only the one a sequential campaign stopped gets its anytime-valid interval.
    """
    return frozenset((r.model, r.task, r.task_digest) for r in runs if r.campaign in campaigns)


def sequential_cells(path: Path) -> frozenset[CellKey]:
    """The cells holding a run of a sequentially stopped campaign in a ledger."""
    with Ledger(path, readonly=True) as ledger:
        runs = list(ledger.records())
    return cells_of_campaigns(runs, sequential_campaigns(runs))
