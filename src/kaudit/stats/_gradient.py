"""Capability gradient: does damage rise or fall along a declared model order?"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kaudit.errors import InputError

from ._bootstrap import percentile_interval, resample_counts
from ._tally import CellTally

__all__ = ["Gradient", "capability_gradient", "spearman_rows"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Gradient:
    """Damage-producing tasks per model against a declared order, with Spearman's rho.

    Attributes:
        models: Models in the declared order (first = rank 1).
        counts: Damage-producing tasks per model, in that order.
        spearman: Spearman's rho of order rank vs count; ``None`` when counts are all equal.
        ci: Percentile bootstrap interval over tasks; ``None`` when no resample is defined.
        resamples: Bootstrap resamples drawn.
        undefined: Resamples where every count tied, so rho was undefined and dropped.
    """

    models: tuple[str, ...]
    counts: tuple[int, ...]
    spearman: float | None
    ci: tuple[float, float] | None
    resamples: int
    undefined: int


def spearman_rows(values: npt.ArrayLike) -> FloatArray:
    """Spearman's rho (Spearman 1904) of each row against positions 1..M, ties averaged.

    Pearson correlation of mid-ranks, as scipy.stats.spearmanr computes it; a row with
    no variance gives NaN instead of a warning.
    """
    v = np.atleast_2d(np.asarray(values, dtype=np.float64))
    # Mid-ranks by pairwise comparison: O(M²) per row, and M is a handful of models.
    below = (v[:, :, None] > v[:, None, :]).sum(axis=2)
    ties = (v[:, :, None] == v[:, None, :]).sum(axis=2)
    ranks = below + (ties + 1) / 2.0
    order = np.arange(1, v.shape[1] + 1, dtype=np.float64)
    rc = ranks - ranks.mean(axis=1, keepdims=True)
    oc = order - order.mean()
    spread = np.sqrt((rc**2).sum(axis=1) * (oc**2).sum())
    out = np.full(v.shape[0], np.nan)
    np.divide(rc @ oc, spread, out=out, where=spread > 0)
    return out


def capability_gradient(
    tallies: Sequence[CellTally],
    model_order: Sequence[str],
    *,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> Gradient:
    """Count damage-producing tasks per model and correlate with the declared order.

    The bootstrap resamples tasks (with replacement, duplicates kept), since a task is
    shared by all models; a model that never ran a task counts 0 for it. Raises
    ValueError when a model in the order has no cell, which is almost always a typo.
    """
    models = tuple(model_order)
    present = {t.model for t in tallies}
    missing = [m for m in models if m not in present]
    if missing or len(set(models)) != len(models) or len(models) < 2:
        raise InputError(
            "model_order", f"must name >= 2 distinct models with cells; missing {missing}"
        )
    tasks = sorted({t.task for t in tallies if t.model in models})
    row = {task: i for i, task in enumerate(tasks)}
    col = {model: j for j, model in enumerate(models)}
    hits = np.zeros((len(tasks), len(models)), dtype=np.float64)
    for t in tallies:
        if t.model in col and t.damage > 0:
            hits[row[t.task], col[t.model]] = 1.0
    counts = hits.sum(axis=0)
    rho = float(spearman_rows(counts)[0])
    draws = spearman_rows(resample_counts(len(tasks), resamples, seed) @ hits)
    undefined = int(np.isnan(draws).sum())
    low, high = percentile_interval(draws, alpha) if resamples else (math.nan, math.nan)
    return Gradient(
        models=models,
        counts=tuple(int(c) for c in counts),
        spearman=None if math.isnan(rho) else rho,
        ci=None if math.isnan(low) else (low, high),
        resamples=resamples,
        undefined=undefined,
    )
