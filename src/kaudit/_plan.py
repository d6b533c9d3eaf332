"""`kaudit.plan`: how many audit runs see damage, and what they cost, as one call.

Everything `kaudit plan` does between parsing its options and printing is here, in its
three modes: a damage probability alone, the damaging cells of ledgers and verdict
files, and a probability priced with one ledger's measured runs. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kaudit._require import require_probability
from kaudit.errors import InputError
from kaudit.ledger import Anchor, Snapshot, VerifyReport
from kaudit.report import Budget, LedgerFormat, ledger_budgets, load_cells
from kaudit.stats import CellPlan, PopulationPlan, plan_cells, population_plans, runs_to_detect


@dataclass(frozen=True)
class AuditPlan:
    """Runs to see damage at least once with probability `detect`, in one of three modes.

    Attributes:
        detect: The wanted chance to see damage at least once (per task, per cell).
        p: The damage probability per run planned for (None for the cells mode).
        runs: With `p` alone: the runs that see damage of probability `p`.
        cells: With sources: each damaging cell's runs at the lower bound of its rate.
        ci_alpha: With sources: the cells' lower bounds are 1 - ci_alpha exact bounds.
        budgets: With `from_ledger`: per model, what those runs cost at its measured means.
        checked: With `from_ledger`: its chain check, for the anchor note.
        population: With sources: per model, the runs per cell that the conservative
            (upper) population single-run miss rate calls for; it does not condition on
            the damage the audit happened to see.
    """

    detect: float
    p: float | None = None
    runs: int | None = None
    cells: tuple[CellPlan, ...] = ()
    ci_alpha: float | None = None
    budgets: tuple[Budget, ...] = ()
    checked: VerifyReport | None = None
    population: tuple[PopulationPlan, ...] = ()

    @property
    def mode(self) -> Literal["probability", "cells", "budgets"]:
        """Which question the plan answers."""
        if self.checked is not None:
            return "budgets"
        return "probability" if self.runs is not None else "cells"

    def to_json(self) -> Any:
        """The plan as `kaudit plan --json` prints it, in its mode's shape."""
        if self.mode == "budgets":
            return [b.to_json() for b in self.budgets]
        if self.mode == "probability":
            return {"runs": self.runs, "p": self.p, "detect": self.detect}
        return {
            "detect": self.detect,
            "ci_alpha": self.ci_alpha,
            "cells": list(map(vars, self.cells)),
            "population": [plan.to_json() for plan in self.population],
        }


def plan(
    p: float | None = None,
    *,
    detect: float = 0.95,
    ledgers: Sequence[str | Path] = (),
    model_files: Sequence[str] = (),
    fmt: Literal["kaudit", "agentrelbench"] = "kaudit",
    ci_alpha: float = 0.05,
    from_ledger: str | Path | Snapshot | None = None,
    tasks: int | None = None,
    concurrency: int = 1,
    head: Anchor | None = None,
) -> AuditPlan:
    """Runs an audit needs to see damage at least once with probability `detect`.

    With `from_ledger`, what runs for damage of probability `p` cost per model, from
    the ledger's measured means per run (its chain verified first, anchored by `head`;
    `tasks` defaults to the ledger's). Otherwise with `p`, the runs for that
    probability; otherwise each damaging cell of `ledgers` (read as `fmt`) and
    `model_files` (`MODEL=PATH` AgentRelBench verdict files), planned at the lower end
    of its 1 - ci_alpha exact interval. Raises `InputError` naming the bad argument.
    """
    require_probability("detect", detect)
    if p is not None:
        require_probability("p", p, one=True)
    if head is not None and from_ledger is None:
        raise InputError("head", "anchors `from_ledger`; give `from_ledger`")
    if from_ledger is not None:
        if p is None:
            raise InputError("from_ledger", "needs `p`: the damage probability to plan for")
        source = from_ledger if isinstance(from_ledger, Snapshot) else Path(from_ledger)
        found = ledger_budgets(source, p, detect, tasks, concurrency, head)
        return AuditPlan(detect, p, budgets=tuple(found[0]), checked=found[1])
    if p is not None:
        return AuditPlan(detect, p, runs=runs_to_detect(p, 1.0 - detect))
    cells = load_cells([str(s) for s in ledgers], model_files, LedgerFormat(fmt))
    plans = plan_cells(cells, 1.0 - detect, ci_alpha)
    population = population_plans(cells, detect, ci_alpha)
    return AuditPlan(detect, cells=tuple(plans), ci_alpha=ci_alpha, population=tuple(population))
