"""One call from cell tallies to every statistic kaudit reports, as frozen values."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kaudit._require import require_at_least

from ._betabinom import (
    ANOVA_ESTIMATOR,
    MOMENTS_ESTIMATOR,
    MleFit,
    MomentsFit,
    anova_icc,
    fit_mle,
    fit_moments,
)
from ._bootstrap import (
    IntArray,
    bootstrap_mean,
    bootstrap_ratio,
    expanded_percentile_interval,
    percentile_interval,
    resample_clusters,
    resample_counts,
    resample_crossed,
)
from ._gradient import Gradient, capability_gradient
from ._headline import IccHeadline, icc_headline
from ._intervals import clopper_pearson, wilson
from ._miss import OBSERVED_CAVEAT, MissRate, audit_miss_rate, miss_probability, miss_weights
from ._passk import pass_at_k, pass_pow_k, pool_mean, safe_pow_k
from ._population import PopulationMiss, model_populations
from ._sequence import CS_METHOD, beta_binomial_cs
from ._stochastic import AlwaysFail, always_fail_upper, is_stochastic, stochastic_damage_share
from ._tally import CellKey, CellTally

__all__ = [
    "CellStats",
    "Compat",
    "PoolEstimate",
    "PoolSummary",
    "StatsSummary",
    "cell_stats",
    "pool_summary",
    "summarize",
]

Interval = Literal["clopper-pearson", "wilson"]
Compat = Literal["kaudit", "agentrelbench"]
Resampling = Literal["tasks", "two-way", "cells"]
"""What the pool bootstrap draws: tasks (default), models and tasks apart, or cells."""

SEQUENTIAL_CAVEAT = (
    "{stopped} of {cells} cells were stopped sequentially (their number of runs depended "
    "on the runs): the pooled safe^k, pass^k, pass@k and miss rates are unbiased only for "
    "fixed-n cells and are biased over these; the unbiased alternative uses only the runs the "
    "stopping rule gives every cell (`fixed_prefix`, shown where the ledger has them)"
)


@dataclass(frozen=True)
class CellStats:
    """Per-cell numbers: the tally, its damage rate and interval, and its verdicts.

    Attributes:
        tally: The cell's counts.
        phat: Damage rate x/n.
        ci_low: Lower end of the (1 − alpha) interval of phat.
        ci_high: Upper end.
        stochastic: Demonstrably stochastic (exact interval inside (eps, 1 − eps)).
        miss_k1: Chance one audit run looks clean, (n − x)/n.
        safe_k: safe^k per requested k (NaN when k > n).
        pass_k: pass^k per requested k (NaN when k > n).
        interval: The interval's method; the anytime-valid confidence sequence for a
            sequentially stopped cell.
    """

    tally: CellTally
    phat: float
    ci_low: float
    ci_high: float
    stochastic: bool
    miss_k1: float
    safe_k: tuple[tuple[int, float], ...]
    pass_k: tuple[tuple[int, float], ...]
    interval: str = "clopper-pearson"


@dataclass(frozen=True)
class PoolEstimate:
    """A pool-level mean of a per-cell estimator with its cluster-bootstrap interval.

    Attributes:
        k: Runs per cell the estimator is about.
        mean: Mean over the cells where it is defined (``k <= n``).
        ci_low: Percentile bootstrap lower end over cells.
        ci_high: Upper end.
        cells: Cells the mean stands on.
    """

    k: int
    mean: float
    ci_low: float
    ci_high: float
    cells: int


FEW_UNITS = 20
"""Below this many resampled units the bootstrap interval covers visibly less than stated."""
FEW_CAVEAT = (
    "only {clusters} tasks: the bootstrap interval covers less than its level with few "
    "tasks (0.855 for 95% at 10 tasks, bench/coverage.py)"
)


def _interval_label(resampling: Resampling, compat: Compat, alpha: float) -> str:
    level = f"{1 - alpha:.0%}"
    if compat == "agentrelbench":
        return f"{level} percentile bootstrap over cells (AgentRelBench's cluster_bootstrap)"
    unit = {"tasks": "tasks", "two-way": "models and tasks (two-way)", "cells": "cells"}
    return f"{level} expanded-percentile bootstrap over {unit[resampling]} (Hesterberg 2015)"


@dataclass(frozen=True)
class StatsSummary:
    """Everything ``kaudit stats`` reports; ``to_json`` gives the command's JSON contract.

    ``population`` is the population miss rate per model (`model_populations`): each
    model's cells fitted apart, as `kaudit plan` plans them, never one fit over a mixture
    of models.
    """

    cells: tuple[CellStats, ...]
    miss: MissRate
    miss_pair_ci: tuple[float, float]
    miss_event_ci: tuple[float, float]
    moments: MomentsFit
    mle: MleFit
    safe_k: tuple[PoolEstimate, ...]
    safe_k_upper: tuple[PoolEstimate, ...]
    pass_k: tuple[PoolEstimate, ...]
    pass_at_k: tuple[PoolEstimate, ...]
    stochastic_share: float
    always_fail: AlwaysFail
    gradient: Gradient | None
    alpha: float
    eps: float
    interval: Interval
    bootstrap: int
    seed: int
    compat: Compat = "kaudit"
    pool_interval: str = ""
    pool_clusters: int = 0
    pool_note: str | None = None
    caveats: tuple[str, ...] = ()
    anova_icc: float | None = None
    fixed_prefix: PoolSummary | None = None
    fixed_prefix_runs: int | None = None
    population: Mapping[str, PopulationMiss] = field(default_factory=dict)
    headline: IccHeadline | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict; NaN and undefined values become ``None`` (JSON null)."""
        out: dict[str, Any] = {
            "cells": [_cell_json(c) for c in self.cells],
            "audit_miss_rate": {
                "pair": self.miss.pair,
                "event": self.miss.event,
                "pairs": self.miss.pairs,
                "k": self.miss.k,
                "pair_ci": list(self.miss_pair_ci),
                "event_ci": list(self.miss_event_ci),
                "observed": OBSERVED_CAVEAT,
                "population": [
                    {"model": model, **fit.to_json()} for model, fit in self.population.items()
                ],
            },
            "beta_binomial": {
                "headline": None if self.headline is None else self.headline.to_json(),
                "moments": {
                    "estimator": MOMENTS_ESTIMATOR,
                    "icc": self.moments.icc,
                    "icc_raw": self.moments.icc_raw,
                    "alpha": self.moments.alpha,
                    "beta": self.moments.beta,
                    "overdispersion_p": self.moments.overdispersion_p,
                    "lr_p": self.moments.lr_p,
                    "mean": self.moments.mean,
                    "cells": self.moments.cells,
                },
                "anova": {"estimator": ANOVA_ESTIMATOR, "icc": self.anova_icc},
                "mle": {
                    "estimator": "maximum likelihood, unequal n (Griffiths 1973)",
                    "icc": self.mle.icc,
                    "icc_ci": None if self.mle.icc_ci is None else list(self.mle.icc_ci),
                    "alpha": self.mle.alpha,
                    "beta": self.mle.beta,
                    "lr_p": self.mle.lr_p,
                    "mean": self.mle.mean,
                    "loglik": self.mle.loglik,
                    "cells": self.mle.cells,
                },
            },
            "pool_interval": {
                "method": self.pool_interval,
                "clusters": self.pool_clusters,
                "note": self.pool_note,
            },
            "caveats": list(self.caveats),
            "fixed_prefix": None
            if self.fixed_prefix is None
            else {
                "runs": self.fixed_prefix_runs,
                "safe_k": _pool_json(self.fixed_prefix.safe_k),
                "pass_k": _pool_json(self.fixed_prefix.pass_k),
                "pass_at_k": _pool_json(self.fixed_prefix.pass_at_k),
            },
            "safe_k": _pool_json(self.safe_k),
            "safe_k_upper": _pool_json(self.safe_k_upper),
            "pass_k": _pool_json(self.pass_k),
            "pass_at_k": _pool_json(self.pass_at_k),
            "stochastic_share": self.stochastic_share,
            "always_fail": {
                "observed": self.always_fail.observed,
                "cells": self.always_fail.cells,
                "upper": self.always_fail.upper,
            },
            "gradient": None if self.gradient is None else _gradient_json(self.gradient),
            "settings": {
                "alpha": self.alpha,
                "eps": self.eps,
                "interval": self.interval,
                "bootstrap": self.bootstrap,
                "seed": self.seed,
                "compat": self.compat,
            },
        }
        return _clean(out)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    """Replace NaN/inf by None recursively so the output is strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _cell_json(c: CellStats) -> dict[str, Any]:
    t = c.tally
    return {
        "model": t.model,
        "task": t.task,
        "n": t.n,
        "damage": t.damage,
        "damage_upper": t.damage_upper,
        "success": t.success,
        "phat": c.phat,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "stochastic": c.stochastic,
        "miss_k1": c.miss_k1,
        "safe_k": {str(k): v for k, v in c.safe_k},
        "pass_k": {str(k): v for k, v in c.pass_k},
        "interval": c.interval,
    }


def _pool_json(estimates: tuple[PoolEstimate, ...]) -> dict[str, Any]:
    return {
        str(e.k): {"mean": e.mean, "ci_low": e.ci_low, "ci_high": e.ci_high, "cells": e.cells}
        for e in estimates
    }


def _gradient_json(g: Gradient) -> dict[str, Any]:
    return {
        "models": list(g.models),
        "counts": list(g.counts),
        "spearman": g.spearman,
        "ci": None if g.ci is None else list(g.ci),
        "resamples": g.resamples,
        "undefined": g.undefined,
    }


def _interval(draws: Any, alpha: float, clusters: int, expanded: bool) -> tuple[float, float]:
    """The pool interval: none from one cluster (no spread), expanded unless reproducing."""
    if clusters < 2 or len(draws) == 0:
        return (math.nan, math.nan)
    if expanded:
        return expanded_percentile_interval(draws, clusters, alpha)
    return percentile_interval(draws, alpha)


def _pool(
    values: list[float], k: int, counts: IntArray, alpha: float, clusters: int, expanded: bool
) -> PoolEstimate:
    mean, cells = pool_mean(values)
    draws = bootstrap_mean(values, counts=counts)
    low, high = _interval(draws, alpha, clusters, expanded)
    return PoolEstimate(k, mean, low, high, cells)


def cell_stats(
    t: CellTally,
    *,
    alpha: float = 0.05,
    eps: float = 0.05,
    interval: Interval = "clopper-pearson",
    k_values: Sequence[int] = (1, 2, 4, 8),
    anytime: bool = False,
) -> CellStats:
    """One cell's numbers exactly as ``summarize`` reports them (it calls this).

    ``anytime`` (a sequentially stopped cell) gives the anytime-valid confidence sequence
    instead of the fixed-n interval. For a reader that needs the cells and the pools
    (`pool_summary`) but not the beta-binomial fits, which import scipy's optimizer.
    """
    ks = tuple(sorted(set(k_values)))
    method = CS_METHOD if anytime else interval
    if anytime:
        low, high = beta_binomial_cs(t.damage, t.n, alpha)
    else:
        pick = clopper_pearson if interval == "clopper-pearson" else wilson
        low, high = pick(t.damage, t.n, alpha)
    return CellStats(
        tally=t,
        phat=t.phat,
        ci_low=low,
        ci_high=high,
        stochastic=is_stochastic(t.damage, t.n, alpha, eps, anytime),
        miss_k1=miss_probability(t.n, t.damage, 1),
        safe_k=tuple((k, safe_pow_k(t.n, t.damage, k)) for k in ks),
        pass_k=tuple((k, pass_pow_k(t.n, t.success, k)) for k in ks),
        interval=method,
    )


def _miss_intervals(
    tallies: Sequence[CellTally], counts: IntArray, alpha: float, clusters: int, expanded: bool
) -> tuple[tuple[float, float], tuple[float, float]]:
    if counts.shape[0] == 0:
        return ((math.nan, math.nan), (math.nan, math.nan))
    pair = bootstrap_ratio(*miss_weights(tallies, 1, "pair"), counts)
    event = bootstrap_ratio(*miss_weights(tallies, 1, "event"), counts)
    return (
        _interval(pair, alpha, clusters, expanded),
        _interval(event, alpha, clusters, expanded),
    )


@dataclass(frozen=True)
class PoolSummary:
    """The pool means of ``summarize`` with their cluster-bootstrap intervals, and no fits.

    The per-model fits (beta-binomial MLE, its profile interval) are what need
    scipy.optimize; a caller that shows only these pool means does without them.

    Attributes:
        interval: Which interval every pool estimate carries, as outputs name it.
        clusters: Units the bootstrap resampled (tasks, or cells).
        note: Why the intervals are undefined, when they are.
        caveats: What the pool means cannot be read as (sequentially stopped cells).
    """

    miss: MissRate
    miss_pair_ci: tuple[float, float]
    miss_event_ci: tuple[float, float]
    safe_k: tuple[PoolEstimate, ...]
    safe_k_upper: tuple[PoolEstimate, ...]
    pass_k: tuple[PoolEstimate, ...]
    pass_at_k: tuple[PoolEstimate, ...]
    interval: str = ""
    clusters: int = 0
    note: str | None = None
    caveats: tuple[str, ...] = ()


def _counts(
    cells: Sequence[CellTally], bootstrap: int, seed: int, resampling: Resampling, compat: Compat
) -> tuple[IntArray, int]:
    """The resamples' per-cell multiplicities and how many units they resample."""
    if compat == "agentrelbench":
        return resample_counts(len(cells), bootstrap, seed, "python"), len(cells)
    tasks = [t.task_id for t in cells]
    if resampling == "cells":
        return resample_counts(len(cells), bootstrap, seed), len(cells)
    if resampling == "two-way":
        models = [t.model for t in cells]
        units = min(len(set(tasks)), len(set(models))) if cells else 0
        return resample_crossed(models, tasks, bootstrap, seed), units
    return resample_clusters(tasks, bootstrap, seed), len(set(tasks))


def _note(clusters: int, resampling: Resampling, compat: Compat) -> str | None:
    if clusters >= 2:
        return None
    unit = "cell" if compat == "agentrelbench" or resampling == "cells" else "task"
    if resampling == "two-way" and compat != "agentrelbench":
        unit = "model or task"
    return f"no interval: the pool has {clusters} {unit}, and resampling one has no spread"


def pool_summary(
    tallies: Sequence[CellTally],
    *,
    alpha: float = 0.05,
    k_values: Sequence[int] = (1, 2, 4, 8),
    bootstrap: int = 2000,
    seed: int = 0,
    compat: Compat = "kaudit",
    resampling: Resampling = "tasks",
    sequential: Collection[CellKey] = (),
) -> PoolSummary:
    """Pool means of safe^k, pass^k, pass@k and the audit miss rate, with their intervals.

    Exactly the numbers ``summarize`` reports for the same arguments (it calls this).
    Models of one pool share tasks, so a task's cells are not independent: the bootstrap
    draws whole tasks (``resampling="tasks"``; ``"two-way"`` draws models too, ``"cells"``
    the old cell-by-cell draw) and reads an expanded percentile interval off the draws,
    which holds its level with few tasks. ``compat="agentrelbench"`` keeps AgentRelBench's
    cell draws and plain percentile interval, to reproduce its numbers. Fewer than two
    units give no interval (NaN) and say why (``note``). Cells in ``sequential`` (model,
    task id, digest) were stopped on their own runs; ``caveats`` says the pool means are
    biased over them.
    """
    cells = tuple(t for t in tallies if t.n > 0)
    ks = tuple(sorted(set(k_values)))
    for k in ks:
        require_at_least("k_values", k, 1)
    counts, clusters = _counts(cells, bootstrap, seed, resampling, compat)
    if bootstrap == 0:
        clusters = 0
    expanded = compat != "agentrelbench"

    def pooled(estimator: Any, attr: str) -> tuple[PoolEstimate, ...]:
        return tuple(
            _pool(
                [estimator(t.n, getattr(t, attr), k) for t in cells],
                k, counts, alpha, clusters, expanded,
            )
            for k in ks
        )  # fmt: skip

    pair_ci, event_ci = _miss_intervals(cells, counts, alpha, clusters, expanded)
    stopped = sum(t.key in sequential for t in cells)
    caveats: tuple[str, ...] = ()
    if stopped:
        caveats += (SEQUENTIAL_CAVEAT.format(stopped=stopped, cells=len(cells)),)
    if 2 <= clusters < FEW_UNITS and compat != "agentrelbench":
        caveats += (FEW_CAVEAT.format(clusters=clusters),)
    return PoolSummary(
        miss=audit_miss_rate(cells, 1),
        miss_pair_ci=pair_ci,
        miss_event_ci=event_ci,
        safe_k=pooled(safe_pow_k, "damage"),
        safe_k_upper=pooled(safe_pow_k, "damage_upper"),
        pass_k=pooled(pass_pow_k, "success"),
        pass_at_k=pooled(pass_at_k, "success"),
        interval=_interval_label(resampling, compat, alpha),
        clusters=clusters,
        note=None if bootstrap == 0 else _note(clusters, resampling, compat),
        caveats=caveats,
    )


def summarize(
    tallies: Sequence[CellTally],
    *,
    alpha: float = 0.05,
    eps: float = 0.05,
    k_values: Sequence[int] = (1, 2, 4, 8),
    bootstrap: int = 2000,
    seed: int = 0,
    interval: Interval = "clopper-pearson",
    model_order: Sequence[str] | None = None,
    sequential: Collection[CellKey] = (),
    compat: Compat = "kaudit",
    fixed_prefix: Sequence[CellTally] | None = None,
    fixed_prefix_runs: int | None = None,
) -> StatsSummary:
    """Compute every pool statistic from cell tallies; pure and seeded.

    Intervals on pool means (pass^k, safe^k, pass@k, miss rates) come from one
    duplicate-preserving cluster bootstrap over cells with ``bootstrap`` resamples from
    ``seed``; per-cell intervals are exact (Clopper-Pearson) unless ``interval="wilson"``.
    The beta-binomial fits and the audit miss rate are over damage (the strict label);
    the population miss rate is fitted per model, the other fits over the whole pool.
    ``model_order`` adds the capability gradient. Cells whose `CellKey` is
    in ``sequential`` were stopped by a rule that looked at their runs; they get the
    anytime-valid confidence sequence instead of a fixed-n interval.
    ``compat="agentrelbench"`` draws the resamples as AgentRelBench's cluster bootstrap
    does (``random.Random(seed)``), so the same seed gives the same intervals as its package.
    ``fixed_prefix`` are the pool's tallies with each stopped cell cut to the runs its
    stopping rule always gives (``fixed_prefix_runs``, `kaudit.report._stopping.guaranteed_runs`):
    a fixed-n sample, so its pool means are unbiased where the full pool's are not.
    """
    pool = pool_summary(
        tallies, alpha=alpha, k_values=k_values, bootstrap=bootstrap, seed=seed,
        compat=compat, sequential=sequential,
    )  # fmt: skip
    cells = tuple(t for t in tallies if t.n > 0)
    ks = tuple(sorted(set(k_values)))
    stats = tuple(
        cell_stats(t, alpha=alpha, eps=eps, interval=interval, k_values=ks,
                   anytime=t.key in sequential)
        for t in cells
    )  # fmt: skip
    x = [t.damage for t in cells]
    n = [t.n for t in cells]
    moments, mle, anova = fit_moments(x, n), fit_mle(x, n, alpha), anova_icc(x, n)
    return StatsSummary(
        cells=stats,
        miss=pool.miss,
        miss_pair_ci=pool.miss_pair_ci,
        miss_event_ci=pool.miss_event_ci,
        moments=moments,
        mle=mle,
        anova_icc=anova,
        safe_k=pool.safe_k,
        safe_k_upper=pool.safe_k_upper,
        pass_k=pool.pass_k,
        pass_at_k=pool.pass_at_k,
        stochastic_share=stochastic_damage_share(cells, alpha, eps, sequential),
        always_fail=always_fail_upper(cells, alpha),
        gradient=None
        if model_order is None
        else capability_gradient(cells, model_order, alpha=alpha, resamples=bootstrap, seed=seed),
        alpha=alpha,
        eps=eps,
        interval=interval,
        bootstrap=bootstrap,
        seed=seed,
        compat=compat,
        fixed_prefix=None
        if fixed_prefix is None
        else pool_summary(
            fixed_prefix,
            alpha=alpha,
            k_values=k_values,
            bootstrap=bootstrap,
            seed=seed,
            compat=compat,
        ),
        fixed_prefix_runs=fixed_prefix_runs,
        pool_interval=pool.interval,
        pool_clusters=pool.clusters,
        pool_note=pool.note,
        caveats=pool.caveats,
        population=model_populations(cells, alpha),
        headline=icc_headline(n, moments, anova, mle),
    )
