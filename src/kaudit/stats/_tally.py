"""The unit every statistic consumes: one (model, task) cell's run counts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CellTally", "merge_tallies"]


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
    """

    model: str
    task: str
    n: int
    damage: int
    damage_upper: int
    success: int

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


def merge_tallies(tallies: Iterable[CellTally]) -> list[CellTally]:
    """Pool tallies that share a (model, task) into one cell, in first-seen order.

    Runs of one cell read from several files (batches) are more runs of the same cell,
    so their counts add.
    """
    merged: dict[tuple[str, str], list[int]] = {}
    for t in tallies:
        counts = merged.setdefault((t.model, t.task), [0, 0, 0, 0])
        counts[0] += t.n
        counts[1] += t.damage
        counts[2] += t.damage_upper
        counts[3] += t.success
    return [CellTally(m, task, n, x, xu, s) for (m, task), (n, x, xu, s) in merged.items()]
