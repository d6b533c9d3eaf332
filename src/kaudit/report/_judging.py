"""LLM judges beside the keyword graders, each against the state: tables and the HTML section.

The keyword graders are the baselines: a judge is worth its cost only if it calls fewer
damaging runs safe than they do, which is the column the tables put first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from kaudit.grade._agreement import JudgeTable, kappa_interval
from kaudit.ledger import RunRecord
from kaudit.ledger._summary import RunSummary
from kaudit.report._grading import grade_transcripts
from kaudit.report._tables import TextTable
from kaudit.stats import clopper_pearson

__all__ = ["judge_html", "judge_text_tables", "rbm_lines"]

_HEADERS = (
    "grader",
    "runs",
    "state damage",
    "called safe",
    "share called safe",
    "CI",
    "both damage",
    "grader only",
    "neither",
    "cannot tell",
    "failed",
    "kappa",
    "kappa CI",
)


def _num(value: float, digits: int = 3) -> str:
    if math.isnan(value):
        return "—"
    return f"{0.0 if abs(value) < 0.5 * 10**-digits else value:.{digits}f}"  # never "-0.000"


def _interval(bounds: tuple[float, float]) -> str:
    return "—" if math.isnan(bounds[0]) else f"[{_num(bounds[0])}, {_num(bounds[1])}]"


def _cell_name(table: JudgeTable) -> str:
    if table.cell is None:
        return "all cells"
    cell = table.cell
    return f"{cell.model} / {cell.task}" + (f"@{cell.digest[:8]}" if cell.digest else "")


def _judge_row(table: JudgeTable, name: str) -> tuple[str, ...]:
    t = table.table
    return (
        name,
        str(t.runs + table.cannot_tell_damage + table.cannot_tell_clean),
        str(table.state_damage),
        str(table.called_safe),
        _num(table.called_safe_share),
        _interval(table.called_safe_ci),
        str(t.both),
        str(t.grader_only),
        str(t.neither),
        str(table.cannot_tell_damage + table.cannot_tell_clean),
        str(table.failed),
        _num(t.kappa),
        _interval(table.kappa_ci),
    )


def _baseline_rows(runs: Sequence[RunRecord | RunSummary], alpha: float) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for result in grade_transcripts(runs):
        t = result.table
        damage = t.both + t.reference_only
        share = t.reference_only / damage if damage else math.nan
        rows.append(
            (f"{result.grader} (keyword baseline)", str(t.runs), str(damage), str(t.reference_only),
             _num(share), _interval(clopper_pearson(t.reference_only, damage, alpha)),
             str(t.both), str(t.grader_only), str(t.neither), "0", "0", _num(t.kappa),
             _interval(kappa_interval(t, alpha)))
        )  # fmt: skip
    return rows


def _judge_name(table: JudgeTable) -> str:
    return f"judge {table.label}"


def judge_text_tables(
    tables: Sequence[JudgeTable], runs: Sequence[RunRecord | RunSummary], alpha: float = 0.05
) -> list[TextTable]:
    """Every judge over all runs beside the keyword baselines, then each judge per cell."""
    if not tables:
        return []
    level = round((1 - alpha) * 100)
    headers = tuple(f"{level}% {h}" if h.endswith("CI") else h for h in _HEADERS)
    overall = [_judge_row(t, _judge_name(t)) for t in tables if t.cell is None]
    summary = TextTable(
        "LLM judges vs state verdicts (share called safe: exact Clopper-Pearson; kappa: "
        "bootstrap over runs)",
        headers,
        tuple(overall + _baseline_rows(runs, alpha)),
    )
    per_cell = tuple(
        _judge_row(t, f"{_judge_name(t)} · {_cell_name(t)}") for t in tables if t.cell is not None
    )
    return [summary, TextTable("LLM judges vs state verdicts, per cell", headers, per_cell)]


def rbm_lines(tables: Sequence[JudgeTable]) -> list[str]:
    """Each judge's count of refused_but_mutated runs, and those it called safe by key."""
    lines = []
    for table in tables:
        if table.cell is not None or not table.refused_but_mutated:
            continue
        keys = ", ".join(f"{m}/{t}#{i}" for _, m, t, i in table.refused_but_mutated_safe)
        lines.append(
            f"{_judge_name(table)}: {len(table.refused_but_mutated_safe)} of "
            f"{table.refused_but_mutated} refused_but_mutated runs called safe"
            + (f": {keys}" if keys else "")
        )
    return lines


def _html_table(table: TextTable) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    return (
        f"<h3>{escape(table.title)}</h3>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def judge_html(
    tables: Sequence[JudgeTable], runs: Sequence[RunRecord | RunSummary], alpha: float
) -> str:
    """The report's judge section: the tables and the refused_but_mutated runs called safe."""
    if not tables:
        return ""
    parts = [_html_table(t) for t in judge_text_tables(tables, runs, alpha)]
    parts += [f"<p>{escape(line)}</p>" for line in rbm_lines(tables)]
    return "<h2>LLM judges vs state</h2>" + "".join(parts)
