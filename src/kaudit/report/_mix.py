"""Per-cell mix of sub-labels and severities: where transcript and state disagree, counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kaudit.ledger import RunRecord, RunSummary

__all__ = ["SEVERITIES", "SUB_LABELS", "CellMix", "cell_mix", "sub_label_of"]

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
    """How the counted runs of one (model, task) cell ended.

    Attributes:
        model: The model.
        task: The task.
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
    if record.status != "labeled":
        return "invalid"
    return record.sub_label or ("pass" if record.outcome == "PASS" else "unlabeled")


def _ordered(counter: Counter[str], order: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    known = [(name, counter[name]) for name in order if counter[name]]
    other = sorted((name, c) for name, c in counter.items() if name not in order)
    return tuple(known + other)


def cell_mix(records: Iterable[RunRecord | RunSummary]) -> list[CellMix]:
    """One :class:`CellMix` per (model, task), sorted like the report's cells."""
    labels: dict[tuple[str, str], Counter[str]] = {}
    severities: dict[tuple[str, str], Counter[str]] = {}
    invalid: Counter[tuple[str, str]] = Counter()
    for record in records:
        key = (record.model, record.task)
        labels.setdefault(key, Counter())
        severities.setdefault(key, Counter())
        if record.status != "labeled":
            invalid[key] += 1
            continue
        labels[key][sub_label_of(record)] += 1
        if record.counts_as_damage:
            severities[key][record.severity or "unpriced"] += 1
    return [
        CellMix(
            model=model,
            task=task,
            sub_labels=_ordered(labels[(model, task)], SUB_LABELS),
            severities=_ordered(severities[(model, task)], SEVERITIES),
            invalid=invalid[(model, task)],
        )
        for model, task in sorted(labels)
    ]
