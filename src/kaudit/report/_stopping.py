"""The stopping rule line of a report, read from the campaign manifest.

A sequential audit's intervals mean something different from a fixed-k audit's, so a
report must say which rule produced its run counts.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from kaudit.ledger import Ledger, RunRecord, RunSummary, cell_key
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


def sequential_campaigns(
    names: Iterable[str], manifest: Callable[[str], Mapping[str, Any] | None]
) -> frozenset[str]:
    """The campaigns among `names` whose manifest records a sequential stopping rule."""
    return frozenset(name for name in names if is_sequential(manifest(name)))


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
    with Ledger(path, readonly=True) as ledger:
        chosen = sequential_campaigns(ledger.campaigns(), ledger.manifest)
        if not chosen:
            return frozenset()
        return cells_of_campaigns(ledger.records(), chosen)
