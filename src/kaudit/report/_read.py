"""A ledger read into a `Report` with its cells section: what `kaudit report` prints.

`read_report` verifies the chain and keeps what the tables need in one pass; the
terminal text, the JSON document and the HTML page are all drawn from that `Report`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kaudit._require import require_probability
from kaudit.errors import KauditError
from kaudit.grade._agreement import judge_tables
from kaudit.ledger import Anchor, Snapshot, open_ledger
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.report._cells import build_report
from kaudit.report._derived import Derived
from kaudit.report._referee import RefereeReport, referee_report
from kaudit.report._report import Report
from kaudit.report._stopping import sequential_campaigns, stopping_rules
from kaudit.report._viewer_build import ViewerBuild

REFEREED_SUITES = ("agentdojo:",)
"""Suites whose runs carry their own checks' judgment (`extra["agentdojo"]`)."""


def read_report(
    ledger: str | Path | Snapshot,
    *,
    campaign: str | None = None,
    alpha: float = 0.05,
    verify: bool = True,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    viewer: bool = False,
) -> Report:
    """Read a ledger (a path, or a `Snapshot` from `kaudit.open`) into a `Report`.

    The report holds the cells section, whose view (`"cells"`) `kaudit report` prints.

    `viewer` says a page will be written (`Report.write_html`): its run viewer is then
    built by a second process during the read, where that is possible and pays
    (`kaudit.report._viewer_build`); the page is the same either way.

    Given a path, the file is opened with `kaudit.open`: a broken chain raises
    `LedgerError` naming the first bad record unless `verify` is False; with `head` (a
    head hex, `kaudit ledger head --json` output, its file, or an `Anchor`) the chain
    must still hold that anchor and hold no record after it (`PastAnchorError`; open
    the ledger with `kaudit.open(..., anchored_prefix=True)` to read the anchored
    records alone); the grades chain must hold the grade it pins, and none after it;
    `pubkey` (a PEM file) must have signed it. Given a snapshot, those were settled
    when it was opened. Raises `KauditError` for a missing file or a campaign the
    ledger does not hold.
    """
    require_probability("alpha", alpha)
    if isinstance(ledger, Snapshot):
        return _read(ledger, campaign, alpha, None)
    path = Path(ledger)
    if not path.is_file():
        raise KauditError(f"{path}: no such ledger file")
    anchor = reader_anchor(head, pubkey, not verify)  # before a builder is forked
    pending = ViewerBuild.start(path, campaign) if viewer else None
    try:
        with open_ledger(path, head=anchor, pubkey=pubkey, verify=verify) as snapshot:
            built = _read(snapshot, campaign, alpha, pending)
            return replace(built, source=None, verified_hashes=snapshot.row_hashes)
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise


def _read(
    snapshot: Snapshot, campaign: str | None, alpha: float, pending: ViewerBuild | None
) -> Report:
    if campaign is not None and campaign not in snapshot.campaigns:
        raise KauditError(
            f"{snapshot.path}: no campaign {campaign!r}; it holds {', '.join(snapshot.campaigns)}"
        )
    runs = snapshot.runs(campaign)
    grades = snapshot.grades
    judges = tuple(judge_tables(runs, grades.counted, alpha))
    names = [campaign] if campaign else list(snapshot.campaigns)
    memo = Derived(runs)
    summary = build_report(runs, alpha, sequential_campaigns(runs), memo.tallies())
    return Report(
        ledger=snapshot.path,
        campaign=campaign,
        alpha=alpha,
        runs=runs,
        summary=summary,
        exposure=summary.exposure,
        memo=memo,
        stopping_rules=stopping_rules(runs),
        judges=judges,
        judged_runs=runs,
        referee=_refereed(snapshot, names, campaign, alpha),
        verified=snapshot.verified,
        records=snapshot.records,
        anchored_records=snapshot.anchored_records,
        chain_head=snapshot.head,
        grades=grades.count,
        anchored_grades=grades.anchored,
        pending_viewer=pending,
        source=snapshot,
    )


def _refereed(
    snapshot: Snapshot, names: list[str], campaign: str | None, alpha: float
) -> RefereeReport | None:
    """The suite's own checks beside kaudit's, read only for campaigns on a refereed suite.

    From the snapshot's counted records only: never one after the anchor.
    """
    manifests = [snapshot.manifest(name) or {} for name in names]
    suites = [str(manifest.get("suite", {}).get("name", "")) for manifest in manifests]
    if not any(s.startswith(REFEREED_SUITES) for s in suites):
        return None
    return referee_report(snapshot.full_records(campaign), "agentdojo", alpha)
