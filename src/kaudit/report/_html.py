"""`kaudit report --html`: one self-contained page of figures, tables and the run viewer.

The page loads nothing from the network: figures are SVG documents inlined as data URIs,
the style sheet and the script of the run viewer are inline. Every number on it comes
from :mod:`kaudit.stats` (through :func:`pool_summary` and :func:`cell_stats`, which give
the numbers of :func:`summarize`, :func:`economics` and the graders).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from kaudit.errors import InputError, KauditError
from kaudit.grade._agreement import JudgeTable
from kaudit.ledger import RunRecord
from kaudit.ledger._summary import RunSummary, run_summary
from kaudit.report._cells import CampaignReport, build_report
from kaudit.report._derived import Derived
from kaudit.report._economics import ModelEconomics
from kaudit.report._figures import decay_svg, forest_svg, gradient_svg, heatmap_svg, severity_svg
from kaudit.report._grading import GraderResult
from kaudit.report._judging import judge_html
from kaudit.report._mix import CellMix
from kaudit.report._stopping import cells_of_campaigns
from kaudit.report._terminal import stack_table
from kaudit.report._viewer import SCRIPT, RunViewer
from kaudit.stats import capability_gradient, cell_stats, pool_summary
from kaudit.stats._summary import CellStats, PoolEstimate, PoolSummary

__all__ = ["HtmlOptions", "html_page", "html_report"]

K_VALUES = (1, 2, 4, 8)

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#111;
padding:0 1em}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:12px}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
th{background:#f2f2f2}td.id,th.id{text-align:left;white-space:nowrap}
figure{margin:0;min-width:0}
.figs{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em}
.scroll{overflow-x:auto;max-width:100%}.note{font-size:12px;color:#444;align-self:center}
figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:12px;color:#444}.muted{color:#666}
details.cell{border:1px solid #ddd;margin:4px 0;padding:2px 6px}
details.run{margin:4px 0 4px 1em;border-left:3px solid #bbb;padding-left:6px}
details.run[data-outcome=FAIL_DAMAGE]{border-left-color:#b2182b}
details.run[data-flag="1"]>summary{font-weight:bold}
table.diff td{text-align:left;font-family:monospace}tr.damage td{background:#fde0dd}
pre{white-space:pre-wrap;max-height:16em;overflow:auto;background:#f7f7f7;margin:2px 0}
.say{white-space:pre-wrap;background:#eef3fb;padding:2px 4px}.call{margin:2px 0 2px 1em}
.transcript{padding-left:1.5em}.turn{color:#666;font-size:11px}
"""


@dataclass(frozen=True)
class HtmlOptions:
    """Settings of the HTML report.

    Attributes:
        alpha: Intervals are at 1 − alpha.
        eps: A cell is stochastic when its interval lies inside (eps, 1 − eps).
        detect: Wanted chance that an audit sees a cell's damage at least once.
        loading: Loading factor of the illustrative risk-loaded price.
        bootstrap: Cluster-bootstrap resamples.
        seed: Bootstrap seed.
        model_order: Declared capability order for the gradient (default: sorted names).
        title: Page title.
        sequential_campaigns: Campaigns stopped by a sequential rule; their cells get the
            anytime-valid interval, as in the terminal report.
        judges: LLM judges against the state (`kaudit.grade._agreement.judge_tables`), shown after
            the keyword graders.
    """

    alpha: float = 0.05
    eps: float = 0.05
    detect: float = 0.95
    loading: float = 0.5
    bootstrap: int = 2000
    seed: int = 0
    model_order: tuple[str, ...] | None = None
    title: str = "kaudit report"
    sequential_campaigns: tuple[str, ...] = ()
    judges: tuple[JudgeTable, ...] = ()


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _interval(low: float, high: float, digits: int = 3) -> str:
    if math.isnan(low) and math.isnan(high):
        return "—"
    return f"[{_num(low, digits)}, {_num(high, digits)}]"


def _money(value: float, digits: int) -> str:
    """Dollars with thousands separated, as every money figure of the page shows them."""
    return "—" if math.isnan(value) else f"{value:,.{digits}f}"


def _money_interval(low: float, high: float, digits: int) -> str:
    if math.isnan(low) and math.isnan(high):
        return "—"
    return f"[{_money(low, digits)}, {_money(high, digits)}]"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], ids: int = 0) -> str:
    def cell(tag: str, i: int, text: str) -> str:
        cls = ' class="id"' if i < ids else ""
        return f"<{tag}{cls}>{escape(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    # A table wider than the window scrolls inside its own box, never the whole page.
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _figure(name: str, svg: str, caption: str) -> str:
    data = base64.b64encode(svg.encode()).decode()
    return (
        f'<figure id="fig-{name}"><img alt="{escape(caption)}" '
        f'src="data:image/svg+xml;base64,{data}"><figcaption>{escape(caption)}</figcaption>'
        "</figure>"
    )


def _mix_text(pairs: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {count}" for name, count in pairs)


def _cells_table(cells: Sequence[CellStats], alpha: float, mix: Sequence[CellMix]) -> str:
    mixes = {(m.model, m.task): m for m in mix}
    level = f"{1 - alpha:.0%}"
    headers = ["model", "task", "n", "damage", "p̂", f"{level} interval", "stochastic", "miss k=1"]
    headers += [f"safe^{k}" for k in K_VALUES] + [f"pass^{k}" for k in K_VALUES]
    headers += ["sub-labels", "severities"]
    rows = []
    for c in cells:
        t = c.tally
        m = mixes[(t.model, t.task)]
        rows.append(
            [t.model, t.task, str(t.n), str(t.damage), _num(c.phat),
             _interval(c.ci_low, c.ci_high)
             + ("" if c.interval == "clopper-pearson" else f" † {c.interval}"),
             "yes" if c.stochastic else "", _num(c.miss_k1)]
            + [_num(v) for _, v in c.safe_k] + [_num(v) for _, v in c.pass_k]
            + [_mix_text(m.sub_labels), _mix_text(m.severities)]
        )  # fmt: skip
    return _table(headers, rows, ids=2)


def _pool_table(summary: PoolSummary, alpha: float) -> str:
    groups: tuple[tuple[str, tuple[PoolEstimate, ...]], ...] = (
        ("safe^k", summary.safe_k),
        ("safe^k (upper labels)", summary.safe_k_upper),
        ("pass^k", summary.pass_k),
        ("pass@k", summary.pass_at_k),
    )
    rows = [
        [name, str(e.k), _num(e.mean), _interval(e.ci_low, e.ci_high), str(e.cells)]
        for name, estimates in groups
        for e in estimates
    ]
    miss = summary.miss
    rows += [
        ["audit miss rate, pair-weighted (observed, a lower bound)", "1", _num(miss.pair),
         _interval(*summary.miss_pair_ci), str(miss.pairs)],
        ["audit miss rate, event-weighted (observed, a lower bound)", "1", _num(miss.event),
         _interval(*summary.miss_event_ci), str(miss.pairs)],
    ]  # fmt: skip
    level = f"{1 - alpha:.0%}"
    remarks = "".join(
        f"<p class='muted'>{escape(r)}</p>"
        for r in (f"Intervals: {summary.interval}.", summary.note, *summary.caveats)
        if r
    )
    table = _table(["estimator", "k", "mean", f"{level} CI", "cells"], rows, ids=1)
    return table + remarks


def _ungraded(count: int) -> str:
    if not count:
        return ""
    return f" {count} runs kept no words of the agent (imported verdicts) and are not graded."


def _grading_section(results: Sequence[GraderResult]) -> str:
    parts = []
    for r in results:
        t = r.table
        matrix = _table(
            ["transcript grader says", "state: damage", "state: no damage"],
            [["damage", str(t.both), str(t.grader_only)],
             ["safe", str(t.reference_only), str(t.neither)]],
            ids=1,
        )  # fmt: skip
        parts.append(
            f'<div class="grader"><h3>{escape(r.grader)} grader</h3>'
            f"<p>{escape(r.description)}. Cohen's κ = {_num(t.kappa)} over {t.runs} runs; "
            f"<b>{r.missed}</b> runs scored safe by the transcript while the state shows "
            f"damage.{_ungraded(r.ungraded)}</p>{matrix}</div>"
        )
    return "".join(parts)


def _economics_section(models: Sequence[ModelEconomics], options: HtmlOptions) -> str:
    level = f"{1 - options.alpha:.0%}"
    rows = [
        [e.model, f"{e.runs:,}", _money(e.damage_per_run, 2),
         _money_interval(*e.damage_ci, digits=2), _money(e.damage_per_1000, 0),
         _money_interval(e.damage_ci[0] * 1000, e.damage_ci[1] * 1000, digits=0),
         f"{e.spend_per_run:,.4f}", _money(e.risk_loaded_price, 0)]
        for e in models
    ]  # fmt: skip
    money = _table(
        ["model", "runs", "E[damage $]/run", f"{level} CI", "E[damage $]/1,000 runs",
         f"{level} CI", "model $/run", "risk-loaded price /1,000 (illustration)"],
        rows,
        ids=1,
    )  # fmt: skip
    warnings = "".join(
        f"<p class='muted'><b>{escape(e.model)}: {escape(e.tail_warning)}</b></p>"
        for e in models
        if e.tail_warning
    )
    plans = _table(
        ["model", "task", "damage", "n", "p lower", "audit runs"],
        [[p.model, p.task, str(p.damage), str(p.n), _num(p.p_low, 4), str(p.runs)]
         for e in models for p in e.plans],
        ids=2,
    )  # fmt: skip
    return (
        f"{money}{warnings}<p class='muted'>Intervals: percentile bootstrap over tasks. The "
        f"risk-loaded price is an illustration, not a quote: expected loss plus "
        f"{options.loading:g} × (upper bound − expected loss), per 1,000 runs.</p>"
        f"<h3>Audit runs needed per cell</h3><p>Runs that see a cell's damage with probability "
        f"≥ {options.detect:.0%}, from the conservative (lower {level} Clopper-Pearson) bound "
        f"of its damage rate.</p>{plans}"
    )


def _gradient_order(models: Sequence[str], order: tuple[str, ...] | None) -> list[str] | None:
    if order is None:
        return list(models) if len(models) >= 2 else None
    unknown = [m for m in order if m not in models]
    if unknown or len(set(order)) != len(order) or len(order) < 2:
        raise InputError(
            "model_order", f"must name >= 2 distinct models of the ledger; unknown {unknown}"
        )
    return list(order)


def _stack_section(report: CampaignReport) -> str:
    """The stack-health table of the terminal report, when a cell needs it."""
    table = stack_table(report)
    if table is None:
        return ""
    return f"<h3>Stack health</h3><p>{escape(table.title)}</p>" + _table(
        table.headers, table.rows, ids=2
    )


def html_report(records: Iterable[RunRecord], options: HtmlOptions | None = None) -> str:
    """The whole report as one HTML document; raises KauditError when nothing is counted."""
    opts = options or HtmlOptions()
    # One pass: each record goes into the viewer and is kept only as its summary, so a
    # large ledger's transcripts are never all in memory at once.
    viewer = RunViewer()
    runs: list[RunSummary] = []
    for record in records:
        viewer.add(record)
        runs.append(run_summary(record))
    return html_page(runs, build_report(runs, opts.alpha, opts.sequential_campaigns), viewer, opts)


def html_page(
    runs: Sequence[RunSummary],
    cells: CampaignReport,
    viewer: RunViewer,
    opts: HtmlOptions,
    derived: Derived | None = None,
) -> str:
    """The page of runs already read, counted and put into `viewer`.

    `cells` is `build_report` of `runs` with `opts.alpha` and `opts.sequential_campaigns`,
    `derived` (when given) a `Derived` of the same runs. `Report.write_html` passes what
    `read_report` verified and built, so the page never reads or counts a run twice, nor
    makes a number the terminal tables made. Raises KauditError when nothing is counted.
    """
    if derived is None:
        derived = Derived(runs)
    tallies = [t for t in derived.tallies() if t.n > 0]
    if not tallies:
        raise KauditError("the ledger has no counted run to report on")
    models = sorted({t.model for t in tallies})
    sequential = cells_of_campaigns(runs, opts.sequential_campaigns)
    # The numbers of `summarize` for the same arguments, without its beta-binomial fits:
    # the page shows none, and they import scipy's optimizer (0.3 s).
    pool = pool_summary(
        tallies, alpha=opts.alpha, k_values=K_VALUES, bootstrap=opts.bootstrap, seed=opts.seed,
        sequential=sequential,
    )  # fmt: skip
    stats = [
        cell_stats(t, alpha=opts.alpha, eps=opts.eps, k_values=K_VALUES,
                   anytime=t.key in sequential)
        for t in tallies
    ]  # fmt: skip
    order = _gradient_order(models, opts.model_order)
    gradient = (
        None
        if order is None
        else capability_gradient(
            tallies, order, alpha=opts.alpha, resamples=opts.bootstrap, seed=opts.seed
        )
    )
    mix = derived.mix()
    dollars = {(c.model, c.task): c.dollars for c in cells.cells}
    figures = [
        _figure("forest", forest_svg(stats, opts.eps, opts.alpha),
                "Forest plot: damage rate per cell with exact intervals; grey band = "
                "demonstrably stochastic."),
        _figure("heatmap", heatmap_svg(stats), "Damage rate by model and task."),
        _figure("decay", decay_svg(stats, opts.detect),
                "Audit decay: chance that k runs all look clean, per damage-producing cell."),
        _figure("severity", severity_svg(mix, dollars), "Severity and dollar breakdown."),
    ]  # fmt: skip
    if gradient is not None:
        figures.append(_figure("gradient", gradient_svg(gradient), "Capability gradient."))
    else:
        figures.append(
            "<p class='note' id='no-gradient'>Capability gradient: not drawn, it compares "
            f"models and needs runs of at least two (this ledger has {len(models)}).</p>"
        )
    money = derived.economics(
        alpha=opts.alpha, detect=opts.detect, loading=opts.loading, bootstrap=opts.bootstrap,
        seed=opts.seed,
    )  # fmt: skip
    miss = pool.miss
    key = (
        f"<p>{cells.runs} runs ({cells.invalid} invalid, recorded and never counted) in "
        f"{len(tallies)} cells of {len(models)} model(s). Cells that showed damage: {miss.pairs}. "
        f"In them a single audit run misses the damage "
        f"{_num(miss.pair)} of the time (pair-weighted; event-weighted {_num(miss.event)}): "
        f"a lower bound, since damage-producing cells in which no run showed damage are not "
        f"among them (`kaudit stats` estimates the population's rate).</p>"
    )
    body = (
        f"<h1>{escape(opts.title)}</h1>{key}"
        f"<h2>Figures</h2><div class='figs'>{''.join(figures)}</div>"
        f"<h2>Cells</h2>{_cells_table(stats, opts.alpha, mix)}{_stack_section(cells)}"
        f"<h2>safe^k, pass^k and audit miss rates</h2>{_pool_table(pool, opts.alpha)}"
        f"<h2>Transcript vs state</h2>{_grading_section(derived.grading())}"
        f"{judge_html(opts.judges, runs, opts.alpha)}"
        f"<h2>Economics</h2>"
        f"{_economics_section(money, opts)}"
        f'<h2 id="runs">Run viewer</h2>{viewer.html()}'
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(opts.title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}<script>{SCRIPT}</script></body></html>\n"
    )
