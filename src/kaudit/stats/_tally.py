"""The unit every statistic consumes: one (model, task) cell's run counts."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CellTally"]


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
