"""Sequential audits: stop adding runs to a cell once its question is answered.

A cell is answered when damage has been seen (the model can do it) or when the runs
show its damage rate below a target (it rarely does). `k` stays the explicit maximum.

"Below the target" is decided exactly as the release gate decides a cell's bound: the
one-sided anytime-valid test at alpha/2 (`kaudit.stats.shown_below`, the gate's
`cell_upper`). A cell the harness stops as shown below P is one the gate, at the same
alpha and a bound of P, grants on that rule, and a cell the harness runs to its maximum
is one the gate denies on it; a stricter two-sided bound here would spend runs the gate
does not need, a looser one would stop cells the gate then denies. Not Clopper-Pearson:
re-checking a fixed-n interval after every run and stopping when it crosses the target
would make its stated error rate wrong. The rule is written into every run's record and
the report states it, with the anytime-valid interval for the stopped cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kaudit._require import require_probability
from kaudit.errors import InputError
from kaudit.stats import shown_below
from kaudit.stats._anytime import ANYTIME_UPPER_METHOD


@dataclass(frozen=True)
class StoppingRule:
    """When a cell has answered its question; `max_k` is the explicit maximum.

    Stop at the first damage run (`on_damage`) and/or once the runs show the damage rate
    below `upper_below` by the one-sided anytime-valid test at alpha/2 (`shown_below`),
    the test the gate's bounds make at the same alpha; it holds at whatever run the cell
    stops. Invalid runs do not count.
    """

    max_k: int
    on_damage: bool = False
    upper_below: float | None = None
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if self.max_k < 1:
            raise InputError("max_k", "must be >= 1: a sequential audit needs an explicit maximum")
        if not self.on_damage and self.upper_below is None:
            raise InputError("upper_below", "must be set when `on_damage` is false")
        if self.upper_below is not None:
            require_probability("upper_below", self.upper_below)

    @classmethod
    def parse(cls, text: str, max_k: int, alpha: float = 0.05) -> StoppingRule:
        """`damage`, `upper<0.05`, or both joined by a comma (either one stops the cell).

        Checked before any run, so a bad rule never leaves a started campaign behind.
        Errors name `stopping` and `stopping_alpha`, the arguments of `kaudit.audit`
        this text and level come from.
        """
        require_probability("stopping_alpha", alpha)
        on_damage = False
        upper: float | None = None
        for part in (p.strip() for p in text.split(",") if p.strip()):
            if part == "damage":
                on_damage = True
            elif part.startswith("upper<"):
                try:
                    upper = float(part.removeprefix("upper<"))
                except ValueError:
                    raise InputError("stopping", f"has no number in {part!r}") from None
                require_probability("stopping", upper, part="has an upper<P target that")
            else:
                raise InputError(
                    "stopping", f"has an unknown condition {part!r}; use damage, upper<P"
                )
        if not on_damage and upper is None:
            raise InputError("stopping", "names no condition; use damage, upper<P")
        return cls(max_k=max_k, on_damage=on_damage, upper_below=upper, alpha=alpha)

    def is_done(self, damage: int, n: int) -> bool:
        """Whether a cell with `damage` damage runs out of `n` counted runs should stop."""
        if n >= self.max_k:
            return True
        if self.on_damage and damage > 0:
            return True
        if self.upper_below is not None and n > 0:
            return shown_below(damage, n, self.upper_below, self.alpha / 2)
        return False

    def text(self) -> str:
        """The rule in one sentence, as a report prints it."""
        parts = []
        if self.on_damage:
            parts.append("at its first damage run")
        if self.upper_below is not None:
            level = round((1 - self.alpha / 2) * 100, 4)
            parts.append(
                f"once its damage rate's {level:g}% upper bound, the gate's at alpha "
                f"{self.alpha:g} ({ANYTIME_UPPER_METHOD}), fell below {self.upper_below:g}"
            )
        return (
            f"sequential: each cell stopped {' or '.join(parts)}, at most k = {self.max_k} "
            "runs; runs already in flight when a cell stopped were kept"
        )

    def describe(self) -> dict[str, Any]:
        """The rule for the campaign manifest."""
        return {
            "kind": "sequential",
            "on_damage": self.on_damage,
            "upper_below": self.upper_below,
            "alpha": self.alpha,
            "max_k": self.max_k,
            # One-sided at alpha/2, as the gate; a record without "bound" was admitted
            # under the two-sided confidence sequence at alpha (`beta_binomial_cs`).
            "bound": ANYTIME_UPPER_METHOD,
            "text": self.text(),
        }


def fixed_rule(k: int) -> dict[str, Any]:
    """The manifest entry of a campaign without a stopping rule."""
    return {"kind": "fixed", "k": k, "text": f"fixed: k = {k} runs per cell"}


class CellCounts:
    """Counted runs and damage runs per (model, task) cell, fed as records land."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], tuple[int, int]] = {}

    def add(self, model: str, task: str, damage: bool) -> None:
        """Count one labeled run."""
        n, x = self._counts.get((model, task), (0, 0))
        self._counts[(model, task)] = (n + 1, x + int(damage))

    def get(self, model: str, task: str) -> tuple[int, int]:
        """(n, damage) of a cell."""
        return self._counts.get((model, task), (0, 0))
