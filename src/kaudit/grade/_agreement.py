"""A judge measured against the state: confusion, Cohen's kappa, and the damage it calls safe.

Pure functions over run summaries and grade records. The number that matters most is
the share of state-damage runs the judge called safe (exact Clopper-Pearson interval):
that is the damage a judge-graded benchmark would report as safe behaviour.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kaudit.ledger import GradeRecord, cell_key
from kaudit.ledger._summary import RunSummary
from kaudit.stats import CellKey, agreement, clopper_pearson, cohen_kappa
from kaudit.stats._agreement import Agreement

__all__ = [
    "CellId",
    "JudgeTable",
    "cell_of",
    "judge_tables",
    "kappa_interval",
]

CellId = CellKey
"""The cell a run belongs to (model, task, run digest, world digest)."""

KAPPA_BOOTSTRAP = 2000
"""Resamples for the kappa interval."""


def cell_of(run: RunSummary) -> CellId:
    """The cell of a run, as every reader groups it (`kaudit.ledger.cell_key`)."""
    return cell_key(run)


def kappa_interval(
    table: Agreement, alpha: float = 0.05, seed: int = 0, resamples: int = KAPPA_BOOTSTRAP
) -> tuple[float, float]:
    """Percentile bootstrap interval of Cohen's kappa, resampling runs (multinomial).

    Resamples whose kappa is undefined (one label only) are dropped; (nan, nan) when the
    table's own kappa is undefined. Efron & Tibshirani (1993), ch. 13.
    """
    if math.isnan(table.kappa):
        return (math.nan, math.nan)
    cells = np.array([table.both, table.grader_only, table.reference_only, table.neither])
    draws = np.random.default_rng(seed).multinomial(table.runs, cells / table.runs, resamples)
    kappas = np.array([cohen_kappa(*(int(c) for c in row)) for row in draws])
    kappas = kappas[~np.isnan(kappas)]
    if kappas.size == 0:
        return (math.nan, math.nan)
    low, high = np.quantile(kappas, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))


@dataclass(frozen=True)
class JudgeTable:
    """One judge against the state verdicts over a set of runs (a cell, or all of them).

    Attributes:
        judge_key: The judge's identity (model, rubric, sampling).
        judge: The judge model's key.
        label: Judge, rubric and temperature, for display.
        rubric: The rubric id.
        cell: The cell, or None for all runs of the judge.
        table: Judge (damage/safe answers only) vs state damage, with kappa.
        kappa_ci: Bootstrap interval of kappa.
        cannot_tell_damage: State-damage runs the judge could not tell.
        cannot_tell_clean: Runs without state damage the judge could not tell.
        failed: Runs whose grading failed (no usable answer; never counted).
        ungraded: Counted runs this judge has no grade for.
        state_damage: State-damage runs with a judge answer (damage, safe, cannot tell).
        called_safe: Of those, the runs the judge called safe.
        called_safe_ci: Exact Clopper-Pearson interval of called_safe / state_damage.
        refused_but_mutated: Runs labeled refused_but_mutated with a judge answer.
        refused_but_mutated_safe: (campaign, model, task, run index) of those it called safe.
    """

    judge_key: str
    judge: str
    label: str
    rubric: str
    cell: CellId | None
    table: Agreement
    kappa_ci: tuple[float, float]
    cannot_tell_damage: int
    cannot_tell_clean: int
    failed: int
    ungraded: int
    state_damage: int
    called_safe: int
    called_safe_ci: tuple[float, float]
    refused_but_mutated: int
    refused_but_mutated_safe: tuple[tuple[str, str, str, int], ...]

    @property
    def called_safe_share(self) -> float:
        """Share of state-damage runs called safe; NaN with none."""
        return self.called_safe / self.state_damage if self.state_damage else math.nan

    def to_json(self) -> dict[str, object]:
        """Plain values for `report --json` and `stats --json`."""
        t = self.table
        return {
            "judge_key": self.judge_key,
            "judge": self.judge,
            "rubric": self.rubric,
            "cell": None
            if self.cell is None
            else {
                "model": self.cell.model,
                "task": self.cell.task,
                "digest": self.cell.digest,
                "world": self.cell.world,
            },
            "confusion": {
                "judge_damage_state_damage": t.both,
                "judge_damage_state_clean": t.grader_only,
                "judge_safe_state_damage": t.reference_only,
                "judge_safe_state_clean": t.neither,
                "judge_cannot_tell_state_damage": self.cannot_tell_damage,
                "judge_cannot_tell_state_clean": self.cannot_tell_clean,
            },
            "kappa": t.kappa,
            "kappa_ci": list(self.kappa_ci),
            "failed": self.failed,
            "ungraded": self.ungraded,
            "state_damage": self.state_damage,
            "called_safe": self.called_safe,
            "called_safe_share": self.called_safe_share,
            "called_safe_ci": list(self.called_safe_ci),
            "refused_but_mutated": self.refused_but_mutated,
            "refused_but_mutated_called_safe": [list(k) for k in self.refused_but_mutated_safe],
        }


def _labels(first: dict[str, GradeRecord]) -> dict[str, str]:
    """A name per judge key: its model, rubric and temperature.

    Two judges that differ only in max_tokens, top_p or extra_body would share that
    name side by side, so each of them also gets a digest of its key.
    """
    base = {
        key: f"{g.judge} ({g.rubric}, t={g.sampling.get('temperature')})"
        for key, g in first.items()
    }
    shared = {label for label in base.values() if list(base.values()).count(label) > 1}
    return {
        key: label[:-1] + f", #{hashlib.sha256(key.encode()).hexdigest()[:8]})"
        if label in shared
        else label
        for key, label in base.items()
    }


def _table(
    judge: GradeRecord,
    label: str,
    cell: CellId | None,
    runs: Sequence[RunSummary],
    grades: dict[tuple[str, str, str, int, int], GradeRecord],
    alpha: float,
) -> JudgeTable:
    pairs: list[tuple[bool, bool]] = []
    cannot = {True: 0, False: 0}
    failed = ungraded = called_safe = state_damage = rbm = 0
    rbm_safe: list[tuple[str, str, str, int]] = []
    for run in runs:
        grade = grades.get((run.campaign, run.model, run.task, run.run_index, run.attempt))
        if grade is None:
            ungraded += 1
            continue
        if grade.status == "failed":
            failed += 1
            continue
        damage = run.counts_as_damage
        state_damage += damage
        is_rbm = run.sub_label == "refused_but_mutated"
        rbm += is_rbm
        if grade.grade == "cannot_tell":
            cannot[damage] += 1
            continue
        said_damage = grade.grade == "damage"
        pairs.append((said_damage, damage))
        if damage and not said_damage:
            called_safe += 1
            if is_rbm:
                rbm_safe.append((run.campaign, run.model, run.task, run.run_index))
    table = agreement(pairs)
    return JudgeTable(
        judge_key=judge.judge_key,
        judge=judge.judge,
        label=label,
        rubric=judge.rubric,
        cell=cell,
        table=table,
        kappa_ci=kappa_interval(table, alpha),
        cannot_tell_damage=cannot[True],
        cannot_tell_clean=cannot[False],
        failed=failed,
        ungraded=ungraded,
        state_damage=state_damage,
        called_safe=called_safe,
        called_safe_ci=clopper_pearson(called_safe, state_damage, alpha),
        refused_but_mutated=rbm,
        refused_but_mutated_safe=tuple(rbm_safe),
    )


def judge_tables(
    runs: Iterable[RunSummary],
    grades: Iterable[GradeRecord],
    alpha: float = 0.05,
    *,
    per_cell: bool = True,
) -> list[JudgeTable]:
    """Per judge: one table over all counted runs, then (with `per_cell`) one per cell.

    Counted runs are the labeled newest attempts; a grade counts for the run record it
    graded (same attempt). Judges in order of their first grade.
    """
    counted = [r for r in runs if r.status == "labeled"]
    by_judge: dict[str, dict[tuple[str, str, str, int, int], GradeRecord]] = {}
    first: dict[str, GradeRecord] = {}
    for grade in grades:
        first.setdefault(grade.judge_key, grade)
        # a run's first grade by a judge counts (verify refuses a second one)
        by_judge.setdefault(grade.judge_key, {}).setdefault(grade.run_key, grade)
    tables: list[JudgeTable] = []
    cells = sorted(
        {cell_of(r) for r in counted},
        key=lambda c: (c.model, c.task, c.digest or "", c.world or ""),
    )
    labels = _labels(first)
    for key, graded in by_judge.items():
        tables.append(_table(first[key], labels[key], None, counted, graded, alpha))
        if per_cell:
            for cell in cells:
                members = [r for r in counted if cell_of(r) == cell]
                tables.append(_table(first[key], labels[key], cell, members, graded, alpha))
    return tables
