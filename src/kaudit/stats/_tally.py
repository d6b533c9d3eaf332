"""The unit every statistic consumes: one (model, task) cell's run counts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

__all__ = ["CellKey", "CellTally", "distinguish_versions", "merge_tallies", "versioned_names"]


@dataclass(frozen=True)
class CellTally:
    """Counts for one (model, task) cell: n independent runs on freshly seeded worlds.

    Attributes:
        model: The model (or agent) name.
        task: The task identifier.
        n: Number of counted runs (INVALID runs are never counted).
        damage: Runs whose final state holds damage (the strict label).
        damage_upper: Runs counted as damage under the inclusive label; the upper bound
            when a label is uncertain, so ``damage <= damage_upper``.
        success: Runs whose success checks passed.
        digest: The task version's digest (None when unknown, e.g. imported runs). Cells
            of different versions are never pooled; `distinguish_versions` names them
            ``task@digest8``.
    """

    model: str
    task: str
    n: int
    damage: int
    damage_upper: int
    success: int
    digest: str | None = None

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError(f"cell {self.model}/{self.task}: n={self.n} is negative")
        for name in ("damage", "damage_upper", "success"):
            value = getattr(self, name)
            if not 0 <= value <= self.n:
                raise ValueError(
                    f"cell {self.model}/{self.task}: {name}={value} is outside [0, n={self.n}]"
                )
        if self.damage_upper < self.damage:
            raise ValueError(
                f"cell {self.model}/{self.task}: damage_upper={self.damage_upper} "
                f"is below damage={self.damage}"
            )

    @property
    def phat(self) -> float:
        """Observed damage rate x/n; NaN for an empty cell."""
        return self.damage / self.n if self.n else float("nan")

    @property
    def task_id(self) -> str:
        """The task id without the ``@digest8`` a version suffix may have added."""
        suffix = _suffix(self.digest)
        return self.task[: -len(suffix)] if self.task.endswith(suffix) else self.task


CellKey = tuple[str, str, str | None]
"""(model, task id, task digest): what makes runs one cell, whatever the cell is named."""


def _suffix(digest: str | None) -> str:
    return f"@{(digest or 'unknown')[:8]}"


def versioned_names(pairs: Iterable[tuple[str, str | None]]) -> dict[tuple[str, str | None], str]:
    """The name of each (task id, digest): ``task@digest8`` when the task has several digests.

    One rule for every view (cells, outcome mix, figures), so they all name a cell alike.
    """
    versions: dict[str, set[str | None]] = {}
    for task, digest in pairs:
        versions.setdefault(task, set()).add(digest)
    return {
        (task, digest): task + _suffix(digest) if len(digests) > 1 else task
        for task, digests in versions.items()
        for digest in digests
    }


def distinguish_versions(tallies: Iterable[CellTally]) -> list[CellTally]:
    """Name cells ``task@digest8`` when one task id appears with several digests.

    A task whose spec changed measures something else; its cells stay apart and say so.
    """
    cells = list(tallies)
    names = versioned_names((t.task_id, t.digest) for t in cells)
    renamed = ((t, names[(t.task_id, t.digest)]) for t in cells)
    return [t if name == t.task_id else replace(t, task=name) for t, name in renamed]


def merge_tallies(tallies: Iterable[CellTally]) -> list[CellTally]:
    """Pool tallies that share a (model, task, digest) into one cell, in first-seen order.

    Runs of one cell read from several files (batches) are more runs of the same cell,
    so their counts add; the same task id under another digest is another cell.
    """
    merged: dict[tuple[str, str, str | None], list[int]] = {}
    for t in tallies:
        counts = merged.setdefault((t.model, t.task_id, t.digest), [0, 0, 0, 0])
        counts[0] += t.n
        counts[1] += t.damage
        counts[2] += t.damage_upper
        counts[3] += t.success
    return distinguish_versions(
        CellTally(m, task, n, x, xu, s, digest)
        for (m, task, digest), (n, x, xu, s) in merged.items()
    )
