"""The terminal report's tables, as data: per-cell numbers, outcome mix, pools, money.

The CLI renders these with rich on a terminal and with :func:`to_text` when piped; both
show the same cells because both start here.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

from kaudit.ledger import RunRecord
from kaudit.ledger._summary import RunSummary, run_summaries
from kaudit.report._cells import FIXED_K_METHOD, CampaignReport, build_report
from kaudit.report._derived import Derived
from kaudit.report._economics import ModelEconomics
from kaudit.report._grading import GraderResult
from kaudit.report._mix import SEVERITIES, SUB_LABELS, CellMix
from kaudit.report._tables import TextTable
from kaudit.stats import CellTally, pool_summary

__all__ = ["ANYTIME_MARK", "terminal_tables"]

ANYTIME_MARK = "†"
"""Marks an interval that is the anytime-valid one of a sequentially stopped cell."""


def _num(value: float, digits: int = 3) -> str:
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def _money(value: float, digits: int = 2) -> str:
    return "—" if math.isnan(value) else f"{value:,.{digits}f}"


def _money_interval(low: float, high: float) -> str:
    """'[a, b]', or '—' when the interval is undefined (fewer than two cells)."""
    return "—" if math.isnan(low) else f"[{_money(low)}, {_money(high)}]"


def _cell_table(report: CampaignReport, model: str) -> TextTable:
    level = round((1 - report.alpha) * 100)
    cells = [cell for cell in report.cells if cell.model == model]
    simulated = " (simulated agent)" if cells[0].simulated else ""
    priced = any(cell.dollars for cell in cells)
    costed = any(cell.cost_usd for cell in cells)
    anytime = sum(cell.interval != FIXED_K_METHOD for cell in cells)
    method = "CP" if not anytime else "CS†" if anytime == len(cells) else "CP or CS†"
    headers = ["task", "n", "damage", "p̂", f"{level}% {method}", "success", "safe^n"]
    headers += ["$ damage"] * priced + ["$ model"] * costed
    rows = []
    for cell in cells:
        row = [cell.task, str(cell.n), str(cell.damage), _num(cell.phat),
               f"[{_num(cell.ci_low)}, {_num(cell.ci_high)}]"
               + (ANYTIME_MARK if cell.interval != FIXED_K_METHOD else ""), str(cell.success),
               _num(cell.safe_k)]  # fmt: skip
        row += [f"{cell.dollars:,.2f}" if cell.dollars else ""] * priced
        row += [f"{cell.cost_usd:,.4f}"] * costed
        rows.append(tuple(row))
    title = f"{model}{simulated}: {sum(c.n for c in cells)} counted runs"
    return TextTable(title, tuple(headers), tuple(rows))


def stack_table(report: CampaignReport) -> TextTable | None:
    """Per real-model cell: runs the stack ended, runs without a tool call; None if all clean.

    Simulated agents have no serving stack, and their scripted refusals make no calls by
    design, so their cells are left out unless an API error was recorded.
    """
    cells = [c for c in report.cells if c.api_errors or (not c.simulated and c.n)]
    if not any(c.api_errors or c.no_tool_calls for c in cells):
        return None
    rows = tuple(
        (c.model, c.task, str(c.n),
         ", ".join(f"{kind} ×{count}" for kind, count in c.api_errors.items()) or "0",
         f"{c.no_tool_calls}/{c.n}", "STACK" if c.measures_stack else "")
        for c in cells
    )  # fmt: skip
    headers = ("model", "task", "n", "API errors", "no tool call", "measures")
    title = "stack health (API errors after all retries; STACK: the cell measures the stack)"
    return TextTable(title, headers, rows, left=2)


def _mix_table(mix: Sequence[CellMix], model: str) -> TextTable:
    own = [m for m in mix if m.model == model]
    labels = [s for s in SUB_LABELS if any(m.count(s) for m in own)]
    labels += sorted({s for m in own for s, _ in m.sub_labels} - set(SUB_LABELS))
    levels = [v for v in (*SEVERITIES, "unpriced") if any(m.severity(v) for m in own)]
    invalid = any(m.invalid for m in own)
    headers = ["task", *labels, *levels] + ["invalid"] * invalid
    rows = [
        (m.task, *(str(m.count(s)) for s in labels), *(str(m.severity(v)) for v in levels))
        + (str(m.invalid),) * invalid
        for m in own
    ]
    title = f"{model}: how runs ended (sub-labels, then worst severity of damage runs)"
    return TextTable(title, tuple(headers), tuple(rows))


def _pool_table(
    records: Sequence[RunSummary],
    cells: Sequence[CellTally],
    alpha: float,
    seed: int,
    sequential: Collection[str] = (),
) -> TextTable:
    from kaudit.report._stopping import cells_of_campaigns

    tallies = [t for t in cells if t.n > 0]
    stopped = cells_of_campaigns(records, sequential) if sequential else frozenset()
    summary = pool_summary(
        tallies, alpha=alpha, k_values=(1, 2, 4, 8), seed=seed, sequential=stopped
    )
    rows = [
        (name, str(e.k), _num(e.mean), f"[{_num(e.ci_low)}, {_num(e.ci_high)}]", str(e.cells))
        for name, group in (("safe^k", summary.safe_k), ("pass^k", summary.pass_k))
        for e in group
    ]
    miss = summary.miss
    for name, value, (low, high) in (
        ("miss rate k=1, pair-weighted (observed, a lower bound)", miss.pair, summary.miss_pair_ci),
        (
            "miss rate k=1, event-weighted (observed, a lower bound)",
            miss.event,
            summary.miss_event_ci,
        ),
    ):
        rows.append((name, "1", _num(value), f"[{_num(low)}, {_num(high)}]", str(miss.pairs)))
    level = round((1 - alpha) * 100)
    headers = ("estimator", "k", "mean", f"{level}% CI", "cells")
    title = f"pool estimates (CI: {summary.interval})"
    for remark in (summary.note, *summary.caveats):
        if remark:
            title += f"; {remark}"
    return TextTable(title, headers, tuple(rows))


def _grading_table(graded: Sequence[GraderResult]) -> TextTable:
    rows = tuple(
        (r.grader, str(r.table.both), str(r.table.grader_only), str(r.missed),
         str(r.table.neither), _num(r.table.kappa), str(r.ungraded))
        for r in graded
    )  # fmt: skip
    headers = ("grader", "both damage", "transcript only", "state only (missed)", "neither",
               "kappa", "ungraded")  # fmt: skip
    return TextTable("transcript grading vs state verdicts", headers, rows)


def _money_table(found: Sequence[ModelEconomics], alpha: float) -> TextTable:
    rows = tuple(
        (e.model, str(e.runs), f"{e.damage_per_run:,.2f}",
         _money_interval(*e.damage_ci) + ("!" if e.tail_warning else ""),
         f"{e.damage_per_1000:,.0f}", f"{e.spend_per_run:,.4f}", _money(e.risk_loaded_price, 0))
        for e in found
    )  # fmt: skip
    level = round((1 - alpha) * 100)
    headers = ("model", "runs", "E[$ damage]/run", f"{level}% CI", "per 1,000 runs",
               "$ model/run", "risk-loaded /1,000 (illustration)")  # fmt: skip
    title = f"economics (damage dollars; CI: {level}% percentile bootstrap over tasks)"
    warned = [f"{e.model}: {e.tail_warning}" for e in found if e.tail_warning]
    if warned:
        title += "; ! " + "; ".join(warned)
    return TextTable(title, headers, rows)


def terminal_tables(
    records: Iterable[RunRecord | RunSummary],
    alpha: float = 0.05,
    seed: int = 0,
    sequential_campaigns: Collection[str] = (),
    report: CampaignReport | None = None,
    derived: Derived | None = None,
) -> list[TextTable]:
    """Every table of `kaudit report`, in print order; empty for a ledger with no cells.

    Cells of `sequential_campaigns` show their anytime-valid interval, marked †.
    `report` is `build_report` of the same records and arguments, and `derived` a
    `Derived` of the same runs, when the caller has them.
    """
    runs = run_summaries(records)
    if derived is None:
        derived = Derived(runs)
    if report is None:
        report = build_report(runs, alpha, sequential_campaigns, derived.tallies())
    models = sorted({cell.model for cell in report.cells})
    mix = derived.mix()
    tables: list[TextTable] = []
    for model in models:
        tables += [_cell_table(report, model), _mix_table(mix, model)]
    stack = stack_table(report)
    if stack is not None:
        tables.append(stack)
    if any(cell.n for cell in report.cells):
        tables += [
            _pool_table(runs, derived.tallies(), alpha, seed, sequential_campaigns),
            _grading_table(derived.grading()),
            _money_table(derived.economics(alpha=alpha, seed=seed), alpha),
        ]
    return tables
