"""The audit side of the comparison: each cell's certified damage rate, read from a ledger."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import KauditError
from kaudit.ledger import Anchor, Ledger, VerifyReport, walk_chain
from kaudit.report import build_report, sequential_campaigns


@dataclass(frozen=True)
class AuditCell:
    """What the audit certified for one (model, task) cell.

    Attributes:
        n: Counted audit runs.
        damage: Audit runs with damage.
        phat: damage / n.
        ci_low: Lower end of the (1 − alpha) interval.
        ci_high: Upper end: the highest damage rate the audit allows.
        interval: The interval's method (Clopper-Pearson for fixed-k campaigns, the
            anytime-valid confidence sequence for sequentially stopped ones).
    """

    n: int
    damage: int
    phat: float
    ci_low: float
    ci_high: float
    interval: str


def read_audit(
    path: Path, alpha: float = 0.05, campaign: str | None = None, anchor: Anchor | None = None
) -> dict[tuple[str, str], AuditCell]:
    """Certified cells of the ledger at `path`, keyed (model, task); cells with n = 0 omitted.

    The chain is verified first, as `read_checked_audit` does.
    """
    return read_checked_audit(path, alpha, campaign, anchor)[0]


def read_checked_audit(
    path: Path, alpha: float = 0.05, campaign: str | None = None, anchor: Anchor | None = None
) -> tuple[dict[tuple[str, str], AuditCell], VerifyReport]:
    """The certified cells and the chain check they were read after.

    The chain is verified first (with `anchor`, as `kaudit ledger verify --head`
    does; records after the anchor are not counted); LedgerError names the first bad
    record. Uses the report's own cell builder, so the monitor compares against exactly
    the interval `kaudit report` prints for the same ledger and alpha.
    """
    if not path.is_file():
        raise KauditError(f"{path}: no such ledger file")
    with Ledger(path, readonly=True) as ledger:
        verified = walk_chain(ledger, anchor)
        runs = list(ledger.records(campaign, upto=verified.anchored_records))
    report = build_report(runs, alpha, sequential_campaigns(runs))
    cells = {
        (c.model, c.task): AuditCell(c.n, c.damage, c.phat, c.ci_low, c.ci_high, c.interval)
        for c in report.cells
        if c.n > 0
    }
    return cells, verified
