"""Reports built from ledgers: per-cell tables, as data first and rendered by the CLI."""

from kaudit.report._cells import CampaignReport, CellRow, build_report, cell_row
from kaudit.report._stopping import stopping_rule_text

__all__ = ["CampaignReport", "CellRow", "build_report", "cell_row", "stopping_rule_text"]
