"""Reports built from ledgers: per-cell tables, as data first and rendered by the CLI."""

from kaudit.report._cells import CampaignReport, CellRow, build_report, cell_row
from kaudit.report._faults import ExposureSummary, exposure_summary
from kaudit.report._stopping import stopping_rule_text

__all__ = [
    "CampaignReport",
    "CellRow",
    "ExposureSummary",
    "build_report",
    "cell_row",
    "exposure_summary",
    "stopping_rule_text",
]
