"""Reports built from ledgers: per-cell tables, the HTML report, economics and budgets.

Everything here returns data or text; the CLI prints it.
"""

from kaudit.report._budget import (
    Budget,
    RunCosts,
    budget,
    budgets_from_records,
    format_duration,
    ledger_budgets,
    run_costs,
)
from kaudit.report._cells import (
    FIXED_K_METHOD,
    CampaignReport,
    CellRow,
    build_report,
    cell_row,
    certified_interval,
)
from kaudit.report._economics import ModelEconomics, economics
from kaudit.report._faults import ExposureSummary, exposure_summary
from kaudit.report._grading import (
    DAMAGE_KEYWORDS,
    GraderResult,
    grade_transcripts,
    keyword_grader,
    refusal_grader,
)
from kaudit.report._html import HtmlOptions, html_report
from kaudit.report._judging import judge_html, judge_text_tables, rbm_lines
from kaudit.report._mix import CellMix, cell_mix
from kaudit.report._read import read_report
from kaudit.report._report import Report, View
from kaudit.report._sources import (
    Compat,
    KauditSources,
    LedgerFormat,
    LedgerJudges,
    default_compat,
    distinct_sources,
    ledger_judges,
    load_cells,
    pool_sources,
    read_kaudit_sources,
    verdict_files,
)
from kaudit.report._stats_report import summarize_sources
from kaudit.report._stopping import (
    cells_of_campaigns,
    chained_rule,
    fixed_prefix_tallies,
    guaranteed_runs,
    is_sequential,
    sequential_campaigns,
    sequential_cells,
    stopping_rule_text,
    stopping_rules,
)
from kaudit.report._tables import TextTable, to_text
from kaudit.report._terminal import ANYTIME_MARK, terminal_tables
from kaudit.report._viewer import declared_refusal_but_mutated, diff_rows, run_viewer

__all__ = [
    "ANYTIME_MARK",
    "DAMAGE_KEYWORDS",
    "FIXED_K_METHOD",
    "Budget",
    "CampaignReport",
    "CellMix",
    "CellRow",
    "Compat",
    "ExposureSummary",
    "GraderResult",
    "HtmlOptions",
    "KauditSources",
    "LedgerFormat",
    "LedgerJudges",
    "ModelEconomics",
    "Report",
    "RunCosts",
    "TextTable",
    "View",
    "budget",
    "budgets_from_records",
    "build_report",
    "cell_mix",
    "cell_row",
    "cells_of_campaigns",
    "certified_interval",
    "chained_rule",
    "declared_refusal_but_mutated",
    "default_compat",
    "diff_rows",
    "distinct_sources",
    "economics",
    "exposure_summary",
    "fixed_prefix_tallies",
    "format_duration",
    "grade_transcripts",
    "guaranteed_runs",
    "html_report",
    "is_sequential",
    "judge_html",
    "judge_text_tables",
    "keyword_grader",
    "ledger_budgets",
    "ledger_judges",
    "load_cells",
    "pool_sources",
    "rbm_lines",
    "read_kaudit_sources",
    "read_report",
    "refusal_grader",
    "run_costs",
    "run_viewer",
    "sequential_campaigns",
    "sequential_cells",
    "stopping_rule_text",
    "stopping_rules",
    "summarize_sources",
    "terminal_tables",
    "to_text",
    "verdict_files",
]
