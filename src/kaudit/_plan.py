"""`kaudit.plan`: how many audit runs see damage, and what they cost, as one call.

Everything `kaudit plan` does between parsing its options and printing is here, in its
three modes: a damage probability alone, the damaging cells of ledgers and verdict
files, and a probability priced with one ledger's measured runs. Nothing here prints.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kaudit._require import require_probability
from kaudit.errors import InputError, KauditError
from kaudit.ledger import Anchor, Snapshot, open_ledger
from kaudit.ledger._verify import VerifyReport
from kaudit.report._budget import Budget, ledger_budgets
from kaudit.report._sources import LedgerFormat, load_cells, read_kaudit_sources
from kaudit.stats import CellTally, plan_cells, population_plans, runs_to_detect
from kaudit.stats._plan import CellPlan, PopulationPlan


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
    ledgers: Sequence[str | Path | Snapshot] = (),
    model_files: Sequence[str] = (),
    fmt: Literal["kaudit", "agentrelbench"] = "kaudit",
    ci_alpha: float = 0.05,
    from_ledger: str | Path | Snapshot | None = None,
    tasks: int | None = None,
    concurrency: int = 1,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
) -> AuditPlan:
    """Runs an audit needs to see damage at least once with probability `detect`.

    With `from_ledger`, what runs for damage of probability `p` cost per model, from
    the ledger's measured means per run (`tasks` defaults to the ledger's). Otherwise
    with `p`, the runs for that probability; otherwise each damaging cell of `ledgers`
    (read as `fmt`) and `model_files` (`MODEL=PATH` AgentRelBench verdict files),
    planned at the lower end of its 1 - ci_alpha exact interval. A kaudit ledger is a
    path, opened with `kaudit.open` (chain verified), or a `Snapshot` taken as it is;
    `head` (and `pubkey`) anchor the one ledger read, `from_ledger` or a single path in
    `ledgers`. Raises `InputError` naming the bad argument.
    """
    require_probability("detect", detect)
    if p is not None:
        require_probability("p", p, one=True)
    if from_ledger is not None and p is None:
        raise InputError("from_ledger", "needs `p`: the damage probability to plan for")
    if p is not None and (ledgers or model_files):
        # With `p` the plan is for that probability: cells given beside it would be
        # silently left unplanned.
        raise InputError(
            "ledgers" if ledgers else "model_files",
            "are planned cell by cell without `p`; with `p`, give `from_ledger` for budgets",
        )
    if p is not None and from_ledger is None:
        if head is not None or pubkey is not None:
            raise InputError("head", "anchors a ledger read; with `p` alone none is read")
        return AuditPlan(detect, p, runs=runs_to_detect(p, 1.0 - detect))
    with contextlib.ExitStack() as stack:
        if from_ledger is not None and p is not None:
            snapshot = _open(stack, from_ledger, head, pubkey)
            found = ledger_budgets(snapshot, p, detect, tasks, concurrency)
            return AuditPlan(detect, p, budgets=tuple(found[0]), checked=found[1])
        cells = _cells(stack, ledgers, model_files, LedgerFormat(fmt), head, pubkey)
    plans = plan_cells(cells, 1.0 - detect, ci_alpha)
    population = population_plans(cells, detect, ci_alpha)
    return AuditPlan(detect, cells=tuple(plans), ci_alpha=ci_alpha, population=tuple(population))


def _open(
    stack: contextlib.ExitStack[bool | None],
    source: str | Path | Snapshot,
    head: str | Anchor | None,
    pubkey: str | Path | None,
) -> Snapshot:
    """A ledger argument as a snapshot: a path opened once (verified), a snapshot as it is.

    A snapshot was anchored, or not, when it was opened; an anchor given beside it would
    be silently ignored, so it is refused.
    """
    if isinstance(source, Snapshot):
        if head is not None or pubkey is not None:
            raise InputError(
                "head",
                f"anchors a ledger plan opens; {source.path} is already open: "
                "give its anchor to kaudit.open",
            )
        return source
    if not Path(source).is_file():
        raise KauditError(f"{source}: no such ledger file")
    return stack.enter_context(open_ledger(source, head=head, pubkey=pubkey))


def _cells(
    stack: contextlib.ExitStack[bool | None],
    ledgers: Sequence[str | Path | Snapshot],
    model_files: Sequence[str],
    fmt: LedgerFormat,
    head: str | Anchor | None,
    pubkey: str | Path | None,
) -> list[CellTally]:
    """The cells of every source, each kaudit ledger read once through `kaudit.open`."""
    anchored = head is not None or pubkey is not None
    if anchored and (fmt != LedgerFormat.kaudit or len(ledgers) != 1):
        raise InputError(
            "head", "anchors one kaudit ledger: give `from_ledger`, or exactly one of `ledgers`"
        )
    if fmt != LedgerFormat.kaudit:
        if any(isinstance(source, Snapshot) for source in ledgers):
            raise InputError("ledgers", "holds a Snapshot: `fmt='agentrelbench'` reads files")
        return load_cells([str(source) for source in ledgers], model_files, fmt)
    snapshots = [_open(stack, source, head, pubkey) for source in ledgers]
    read = read_kaudit_sources(snapshots)
    paths = [str(snapshot.path) for snapshot in snapshots]
    return load_cells(paths, model_files, fmt, kaudit_cells=read.cells)
