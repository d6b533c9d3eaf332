"""Per-cell mix of sub-labels and severities: where transcript and state disagree, counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kaudit.ledger import RunRecord, cell_key
from kaudit.ledger._summary import RunSummary
from kaudit.stats import CellKey
from kaudit.stats._tally import versioned_names

__all__ = ["SEVERITIES", "SUB_LABELS", "CellMix", "cell_mix", "shown_sub_label", "sub_label_of"]

SUB_LABELS = (
    "pass",
    "completed_clean",
    "refused_clean",
    "errored_clean",
    "stalled_clean",
    "completed_damage",
    "refused_but_mutated",
    "errored_after_mutation",
    "stalled_after_mutation",
)
"""Display order: PASS first, then the clean failures, then the damaging sub-labels."""

SEVERITIES = ("LOW", "MEDIUM", "HIGH", "CRITICAL")


@dataclass(frozen=True)
class CellMix:
    """How the counted runs of one (model, task, task digest) cell ended.

    Attributes:
        model: The model.
        task: The task, named ``task@digest8`` like the report's cells when the task was
            run in several versions.
        sub_labels: Counted runs per sub-label (``pass`` for PASS runs).
        severities: Damage runs per worst severity.
        invalid: Runs recorded without a verdict (never counted).
    """

    model: str
    task: str
    sub_labels: tuple[tuple[str, int], ...]
    severities: tuple[tuple[str, int], ...]
    invalid: int

    def count(self, sub_label: str) -> int:
        """Counted runs with this sub-label (0 when none)."""
        return dict(self.sub_labels).get(sub_label, 0)

    def severity(self, level: str) -> int:
        """Damage runs whose worst severity is `level`."""
        return dict(self.severities).get(level, 0)


def sub_label_of(record: RunRecord | RunSummary) -> str:
    """The run's sub-label for display: ``pass`` for PASS, ``invalid`` for no verdict."""
    return shown_sub_label(record.status, record.sub_label, record.outcome)


def shown_sub_label(status: str, sub_label: str | None, outcome: str | None) -> str:
    """`sub_label_of` from the three fields, for a reader holding a record's JSON."""
    if status != "labeled":
        return "invalid"
    return sub_label or ("pass" if outcome == "PASS" else "unlabeled")


def _ordered(counter: Counter[str], order: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    known = [(name, counter[name]) for name in order if counter[name]]
    other = sorted((name, c) for name, c in counter.items() if name not in order)
    return tuple(known + other)


def cell_mix(records: Iterable[RunRecord | RunSummary]) -> list[CellMix]:
    """One :class:`CellMix` per cell, sorted and named like the report's cells.

    A task run in two versions is two cells here too, never one merged mix.
    """
    labels: dict[CellKey, Counter[str]] = {}
    severities: dict[CellKey, Counter[str]] = {}
    invalid: Counter[CellKey] = Counter()
    for record in records:
        key = cell_key(record)
        labels.setdefault(key, Counter())
        severities.setdefault(key, Counter())
        if record.status != "labeled":
            invalid[key] += 1
            continue
        labels[key][sub_label_of(record)] += 1
        if record.counts_as_damage:
            severities[key][record.severity or "unpriced"] += 1
    names = versioned_names(labels)
    mixes = [
        CellMix(
            model=key.model,
            task=names[key],
            sub_labels=_ordered(labels[key], SUB_LABELS),
            severities=_ordered(severities[key], SEVERITIES),
            invalid=invalid[key],
        )
        for key in labels
    ]
    return sorted(mixes, key=lambda mix: (mix.model, mix.task))
