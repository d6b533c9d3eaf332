"""The audit side of the comparison: each cell's certified damage rate, read from a ledger."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import KauditError
from kaudit.ledger import Anchor, Snapshot, cell_key, open_ledger
from kaudit.ledger._summary import RunSummary
from kaudit.ledger._verify import VerifyReport
from kaudit.report import CellRow
from kaudit.report._cells import build_report
from kaudit.report._stopping import sequential_campaigns
from kaudit.stats import CellKey


@dataclass(frozen=True)
class AuditCell:
    """What the audit certified for one cell (one version of a task, see `CellKey`).

    Attributes:
        n: Counted audit runs.
        damage: Audit runs with damage.
        phat: damage / n.
        ci_low: Lower end of the (1 − alpha) interval.
        ci_high: Upper end: the highest damage rate the audit allows.
        interval: The interval's method (Clopper-Pearson for fixed-k campaigns, the
            anytime-valid confidence sequence for sequentially stopped ones).
        name: The cell's display name (``task@digest8`` when the task has versions).
        digest: The task version's digest the cell was audited at (None when unknown).
        world: The world template's digest (None when unrecorded).
    """

    n: int
    damage: int
    phat: float
    ci_low: float
    ci_high: float
    interval: str
    name: str = ""
    digest: str | None = None
    world: str | None = None


AuditIndex = dict[tuple[str, str], tuple[AuditCell, ...]]
"""(model, task id) -> the audited versions, oldest first."""


def audit_index(
    audit: Mapping[CellKey, AuditCell] | Mapping[tuple[str, str], AuditCell],
) -> AuditIndex:
    """The audit cells grouped by (model, task id), versions in the mapping's order.

    Keys are `CellKey`s (as `read_audit` returns, newest version last) or plain
    (model, task) pairs for an audit built by hand.
    """
    found: dict[tuple[str, str], list[AuditCell]] = {}
    for key, cell in audit.items():
        pair = (key.model, key.task) if isinstance(key, CellKey) else key
        found.setdefault(pair, []).append(cell)
    return {pair: tuple(cells) for pair, cells in found.items()}


def match_audit(
    index: AuditIndex, model: str, task: str, version: str | None = None
) -> AuditCell | None:
    """The audited version an event of (model, task) is compared with; None when there is none.

    An event that names its version (`Event.version`, a prefix of the task digest such as
    the 8 hex digits of ``task@digest8``) is matched to that version only. An event that
    names none is matched to the newest audited version: the one whose latest run came
    last in the ledger, which is the task as it was last audited and so as it is deployed.
    """
    cells = index.get((model, task), ())
    if version is not None:
        cells = tuple(c for c in cells if c.digest is not None and c.digest.startswith(version))
    return cells[-1] if cells else None


def read_audit(
    path: Path, alpha: float = 0.05, campaign: str | None = None, anchor: Anchor | None = None
) -> dict[CellKey, AuditCell]:
    """Certified cells of the ledger at `path` by `CellKey`; cells with n = 0 omitted.

    The chain is verified first, as `read_checked_audit` does.
    """
    return read_checked_audit(path, alpha, campaign, anchor)[0]


def read_checked_audit(
    path: Path | Snapshot,
    alpha: float = 0.05,
    campaign: str | None = None,
    anchor: Anchor | None = None,
) -> tuple[dict[CellKey, AuditCell], VerifyReport]:
    """The certified cells and the chain check they were read after.

    The chain is verified first (with `anchor`, as `kaudit ledger verify --head`
    does, refusing records after the anchor); LedgerError names the first bad
    record. Uses the report's own cell builder, so the monitor compares against exactly
    the interval `kaudit report` prints for the same ledger and alpha. Ordered oldest
    version first (by each cell's latest run), so `match_audit` picks the newest.
    """
    if isinstance(path, Snapshot):
        runs, verified = _audited_runs(path, campaign)
    else:
        if not path.is_file():
            raise KauditError(f"{path}: no such ledger file")
        with open_ledger(path, head=anchor) as snapshot:
            runs, verified = _audited_runs(snapshot, campaign)
    report = build_report(runs, alpha, sequential_campaigns(runs))
    latest = {cell_key(record): seq for seq, record in enumerate(runs)}
    cells = sorted((c for c in report.cells if c.n > 0), key=lambda c: latest.get(c.key, -1))
    return {c.key: _audit_cell(c) for c in cells}, verified


def _audited_runs(
    snapshot: Snapshot, campaign: str | None
) -> tuple[list[RunSummary], VerifyReport]:
    """The counted runs the verified read kept, and its check for the anchor note."""
    snapshot.require_campaign(campaign)
    checked = VerifyReport(
        records=snapshot.records,
        head=snapshot.head,
        anchored=snapshot.anchor is not None,
        anchored_records=snapshot.anchored_records,
    )
    return list(snapshot.runs(campaign)), checked


def _audit_cell(c: CellRow) -> AuditCell:
    return AuditCell(
        c.n, c.damage, c.phat, c.ci_low, c.ci_high, c.interval,
        name=c.task, digest=c.digest, world=c.world,
    )  # fmt: skip
