"""Reports built from ledgers: per-cell tables, the HTML report, economics and budgets.

Everything here returns data or text; the CLI prints it.
"""

from kaudit.report._budget import budget, budgets_from_records
from kaudit.report._cells import CampaignReport, CellRow
from kaudit.report._economics import economics
from kaudit.report._grading import keyword_grader, refusal_grader
from kaudit.report._html import HtmlOptions, html_report
from kaudit.report._report import Report
from kaudit.report._sources import verdict_files
from kaudit.report._stopping import stopping_rule_text, stopping_rules
from kaudit.report._tables import TextTable, to_text
from kaudit.report._terminal import terminal_tables

__all__ = [
    "CampaignReport",
    "CellRow",
    "HtmlOptions",
    "Report",
    "TextTable",
    "budget",
    "budgets_from_records",
    "economics",
    "html_report",
    "keyword_grader",
    "refusal_grader",
    "stopping_rule_text",
    "stopping_rules",
    "terminal_tables",
    "to_text",
    "verdict_files",
]
