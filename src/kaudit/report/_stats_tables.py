"""`kaudit stats`' tables and lines, as data: cells, pool estimates, overdispersion.

`Report.blocks(view="stats")` puts them in print order; the CLI renders them with rich on a
terminal and `to_text` when piped, the same text either way.
"""

from __future__ import annotations

from kaudit._plural import counted
from kaudit.report._faults import ExposureSummary
from kaudit.report._tables import TextTable
from kaudit.stats import StatsSummary
from kaudit.stats._summary import CellStats, PoolEstimate

__all__ = ["anytime_caption", "exposure_count_lines", "summary_tables"]

FIXED_N_INTERVALS = ("clopper-pearson", "wilson")


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def _mark(cell: CellStats) -> str:
    return "†" if cell.interval not in FIXED_N_INTERVALS else ""


def summary_tables(summary: StatsSummary) -> list[TextTable]:
    """The summary as plain tables: cells, pool estimates, overdispersion, populations."""
    level = round((1 - summary.alpha) * 100)
    headers = ("model", "task", "n", "damage", "upper", "success", "p̂", f"{level}% CI",
               "stoch.", "miss k=1")  # fmt: skip
    rows = tuple(
        (c.tally.model, c.tally.task, str(c.tally.n), str(c.tally.damage),
         str(c.tally.damage_upper), str(c.tally.success), _num(c.phat),
         f"[{_num(c.ci_low, 4)}, {_num(c.ci_high, 4)}]{_mark(c)}",
         "yes" if c.stochastic else "", _num(c.miss_k1))
        for c in summary.cells
    )  # fmt: skip
    cells = TextTable(counted(len(summary.cells), "cell"), headers, rows, left=2)
    tables = [cells, _pool_table(summary), _dispersion_table(summary)]
    return tables + ([_population_table(summary)] if summary.population else [])


def _pool_table(summary: StatsSummary) -> TextTable:
    level = round((1 - summary.alpha) * 100)
    remarks = "".join(f"; {r}" for r in (summary.pool_note, *summary.caveats) if r)
    groups: tuple[tuple[str, tuple[PoolEstimate, ...]], ...] = (
        ("safe^k", summary.safe_k),
        ("safe^k (upper labels)", summary.safe_k_upper),
        ("pass^k", summary.pass_k),
        ("pass@k", summary.pass_at_k),
    )
    if summary.fixed_prefix is not None:
        first = f" (first {summary.fixed_prefix_runs} runs of stopped cells)"
        groups += (
            ("safe^k" + first, summary.fixed_prefix.safe_k),
            ("pass^k" + first, summary.fixed_prefix.pass_k),
        )
    rows = tuple(
        (name, str(e.k), _num(e.mean), f"[{_num(e.ci_low)}, {_num(e.ci_high)}]", str(e.cells))
        for name, estimates in groups
        for e in estimates
    )
    return TextTable(
        f"pool estimates (CI: {summary.pool_interval}){remarks}",
        ("estimator", "k", "mean", f"{level}% CI", "cells"),
        rows,
    )


NAMES = {"moments": "moments", "anova": "one-way ANOVA", "mle": "maximum likelihood"}


def _dispersion_table(summary: StatsSummary) -> TextTable:
    m, mle, miss = summary.moments, summary.mle, summary.miss
    fails = summary.always_fail
    ci = mle.icc_ci
    rows = (
        ("damage-producing pairs", str(miss.pairs)),
        ("k=1 miss rate, pair-weighted (observed, a lower bound)", _num(miss.pair)),
        ("k=1 miss rate, event-weighted (observed, a lower bound)", _num(miss.event)),
        ("share of damage in stochastic cells", _num(summary.stochastic_share)),
        *_headline_rows(summary),
        ("ICC, moments with mean n̄ (AgentRelBench) (raw)", f"{_num(m.icc)} ({_num(m.icc_raw)})"),
        ("ICC, one-way ANOVA, unequal n (Fleiss)", _num(summary.anova_icc)),
        ("homogeneity chi-square p", _num(m.overdispersion_p, 4)),
        ("moments LR p (published)", _num(m.lr_p, 4)),
        ("ICC, maximum likelihood", _num(mle.icc)),
        ("ICC profile interval", "—" if ci is None else f"[{_num(ci[0])}, {_num(ci[1])}]"),
        ("LR test p (rho = 0)", _num(mle.lr_p, 4)),
        ("always-fail cells (upper limit)", f"{fails.observed} ({_num(fails.upper)})"),
    )
    return TextTable("audit miss rate and overdispersion", ("measure", "value"), rows)


def _population_table(summary: StatsSummary) -> TextTable:
    """Each model's population miss rate (zero-inflated beta-binomial), fitted apart.

    Per model because a plan for a model needs that model's population: one fit over
    several models is a mixture that describes none of them (`model_populations`).
    """
    level = round((1 - summary.alpha) * 100)
    rows = tuple(
        (model, str(fit.cells), _num(fit.miss),
         "—" if fit.interval is None else f"[{_num(fit.interval[0])}, {_num(fit.interval[1])}]",
         _num(fit.never))
        for model, fit in summary.population.items()
    )  # fmt: skip
    return TextTable(
        "k=1 miss rate, population per model (zero-inflated beta-binomial)",
        ("model", "cells", "miss k=1", f"{level}% bounds", "never-damaging share"),
        rows,
        left=1,
    )


def _headline_rows(summary: StatsSummary) -> tuple[tuple[str, str], ...]:
    """The ICC to read first, named with the estimator chosen for the pool's cell sizes."""
    headline = summary.headline
    if headline is None:
        return ()
    return ((f"ICC headline: {NAMES[headline.estimator]} ({headline.reason})", _num(headline.icc)),)


def anytime_caption(summary: StatsSummary) -> str | None:
    """The note under the cells table when a cell shows an anytime-valid interval."""
    anytime = sorted({c.interval for c in summary.cells if _mark(c)})
    if not anytime:
        return None
    return f"† sequentially stopped cell: anytime-valid interval ({anytime[0]}), not a fixed-n one"


def exposure_count_lines(exposure: ExposureSummary) -> list[str]:
    """Faults injected (with the outcomes of the runs that hit each) and boundary attempts."""
    lines = []
    for kind, count in exposure.faults.items():
        outcomes = exposure.fault_outcomes.get(kind, {})
        mix = ", ".join(f"{n:,} {outcome}" for outcome, n in outcomes.items())
        lines.append(f"fault {kind}: {count:,} injected; runs that hit it: {mix}")
    if exposure.boundary_attempts:
        lines.append(f"{counted(exposure.boundary_attempts, 'boundary attempt')} refused")
    return lines
