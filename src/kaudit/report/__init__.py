"""Reports built from ledgers: per-cell tables, as data first and rendered by the CLI."""

from kaudit.report._cells import (
    FIXED_K_METHOD,
    CampaignReport,
    CellRow,
    build_report,
    cell_row,
    certified_interval,
)
from kaudit.report._stopping import (
    is_sequential,
    sequential_campaigns,
    sequential_cells,
    stopping_rule_text,
)

__all__ = [
    "FIXED_K_METHOD",
    "CampaignReport",
    "CellRow",
    "build_report",
    "cell_row",
    "certified_interval",
    "is_sequential",
    "sequential_campaigns",
    "sequential_cells",
    "stopping_rule_text",
]
