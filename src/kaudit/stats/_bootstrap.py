"""Duplicate-preserving cluster bootstrap over cells, vectorized with numpy.

Runs of one cell share a task, a model and a world, so they are not independent of
each other; the cell is the independent unit. A resample draws cells with replacement
and keeps each drawn cell's runs as they are (runs are never resampled within a cell);
a cell drawn twice counts twice (Davison & Hinkley 1997, section 3.8, "resampling
clusters"). A resample is represented by how many times each cell was drawn, so any
statistic that is a ratio of per-cell sums is one matrix product.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit._require import require_at_least, require_probability
from kaudit.errors import InputError

__all__ = [
    "bootstrap_mean",
    "bootstrap_ratio",
    "expanded_percentile_interval",
    "percentile_interval",
    "resample_clusters",
    "resample_counts",
    "resample_crossed",
]

Generator = Literal["numpy", "python"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def resample_counts(
    cells: int, resamples: int, seed: int, generator: Generator = "numpy"
) -> IntArray:
    """How many times each cell is drawn in each resample, shape ``(resamples, cells)``.

    Each resample draws ``cells`` indices uniformly with replacement; the counts are
    those draws tallied per cell (one ``bincount`` over all resamples at once). Same
    seed, same counts: the generator is ``numpy.random.default_rng(seed)``, or with
    ``generator="python"`` one ``random.Random(seed).choices`` call per resample, the
    draws AgentRelBench's cluster bootstrap makes, so both give the same resamples.
    """
    require_at_least("cells", cells, 0)
    require_at_least("resamples", resamples, 0)
    if cells == 0:
        return np.zeros((resamples, 0), dtype=np.int64)
    drawn = _draw(cells, resamples, seed, generator)
    # Offset each resample's indices into its own block so one bincount tallies them all.
    flat = (drawn + np.arange(resamples)[:, None] * cells).ravel()
    tallied = np.bincount(flat, minlength=resamples * cells)
    return tallied.reshape(resamples, cells).astype(np.int64)


def resample_clusters(
    labels: Sequence[Hashable], resamples: int, seed: int, generator: Generator = "numpy"
) -> IntArray:
    """Per-cell multiplicities when whole clusters (e.g. tasks) are drawn with replacement.

    Cells sharing a label (the cells of one task across models) are drawn together, so
    what they share (the task's difficulty) varies between resamples as it would between
    samples of tasks; resampling cells as if independent leaves it out and undercovers.
    Shape ``(resamples, len(labels))``; a cell's count is its cluster's count.
    """
    index: dict[Hashable, int] = {}
    of = [index.setdefault(label, len(index)) for label in labels]
    drawn = resample_counts(len(index), resamples, seed, generator)
    return drawn[:, np.asarray(of, dtype=np.int64)] if of else drawn


def resample_crossed(
    rows: Sequence[Hashable], cols: Sequence[Hashable], resamples: int, seed: int
) -> IntArray:
    """Two-way (pigeonhole) resampling of a crossed design: rows and columns drawn apart.

    Owen (2007), "The pigeonhole bootstrap": models and tasks are each drawn with
    replacement, independently; a cell counts ``rows drawn × columns drawn`` times. Use it
    when the models too stand for a population; it is conservative for fixed models.
    """
    if len(rows) != len(cols):
        raise InputError("cols", "must label the same cells as `rows`")
    first = resample_clusters(rows, resamples, seed)
    second = resample_clusters(cols, resamples, seed + 1_000_003)
    return first * second


def _draw(cells: int, resamples: int, seed: int, generator: Generator) -> IntArray:
    if generator == "numpy":
        return np.random.default_rng(seed).integers(0, cells, size=(resamples, cells))
    rng, indices = random.Random(seed), range(cells)
    drawn = [rng.choices(indices, k=cells) for _ in range(resamples)]
    return np.asarray(drawn, dtype=np.int64).reshape(resamples, cells)


def bootstrap_ratio(
    numerator: npt.ArrayLike, denominator: npt.ArrayLike, counts: IntArray
) -> FloatArray:
    """Per-resample ``Σ count·numerator / Σ count·denominator`` over cells.

    A mean over cells is the ratio with denominator 1; an event-weighted mean has
    ``numerator = x·value`` and ``denominator = x``; cells where a statistic is undefined
    enter with 0 in both. A resample whose denominator is 0 gives NaN.
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    if num.shape != den.shape or num.shape != (counts.shape[1],):
        raise InputError("counts", "and `numerator`, `denominator` disagree on the number of cells")
    weights = counts.astype(np.float64)  # float matmul goes through BLAS
    top = weights @ num
    bottom = weights @ den
    out = np.full(top.shape, np.nan)
    np.divide(top, bottom, out=out, where=bottom != 0)
    return out


def bootstrap_mean(
    values: npt.ArrayLike,
    *,
    resamples: int | None = None,
    seed: int | None = None,
    counts: IntArray | None = None,
) -> FloatArray:
    """Resampled means over cells of per-cell values; NaN values are left out per resample.

    Give either ``resamples`` and ``seed`` to draw the resamples here, or ``counts`` (from
    :func:`resample_counts`) to share one set of resamples across several statistics.
    """
    v = np.asarray(values, dtype=np.float64)
    if counts is None:
        if resamples is None or seed is None:
            raise TypeError("bootstrap_mean needs resamples and seed, or counts")
        counts = resample_counts(v.size, resamples, seed)
    elif resamples is not None or seed is not None:
        raise TypeError("bootstrap_mean takes resamples and seed, or counts, not both")
    defined = ~np.isnan(v)
    return bootstrap_ratio(np.where(defined, v, 0.0), defined.astype(np.float64), counts)


def percentile_interval(draws: npt.ArrayLike, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile (1 − alpha) interval of bootstrap draws (Efron & Tibshirani 1993).

    NaN draws (resamples where the statistic is undefined) are dropped; no defined draw
    gives ``(nan, nan)``.
    """
    require_probability("alpha", alpha)
    d = np.asarray(draws, dtype=np.float64)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return (math.nan, math.nan)
    low, high = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))


def expanded_percentile_interval(
    draws: npt.ArrayLike, clusters: int, alpha: float = 0.05
) -> tuple[float, float]:
    """Expanded percentile interval of bootstrap draws over ``clusters`` resampled units.

    Hesterberg (2015), "What teachers should know about the bootstrap", section 5: the
    plain percentile interval is too narrow with few units (it behaves like
    ``z·s/sqrt(m)`` where ``t_{m-1}·s/sqrt(m−1)`` is due); taking the quantiles at
    ``Φ(−sqrt(m/(m−1))·t_{m−1, 1−alpha/2})`` instead corrects both. Undefined
    ``(nan, nan)`` with fewer than two clusters: resampling one unit has no spread.
    """
    require_probability("alpha", alpha)
    d = np.asarray(draws, dtype=np.float64)
    d = d[~np.isnan(d)]
    if clusters < 2 or d.size == 0:
        return (math.nan, math.nan)
    t = float(_sp.stdtrit(clusters - 1, 1.0 - alpha / 2))
    tail = float(_sp.ndtr(-math.sqrt(clusters / (clusters - 1)) * t))
    low, high = np.quantile(d, [tail, 1.0 - tail])
    return (float(low), float(high))
