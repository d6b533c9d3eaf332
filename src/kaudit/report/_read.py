"""A ledger read into one `Report`, the value every renderer takes.

`read_report` verifies the chain and keeps what the tables need in one pass; the
terminal text (`Report.blocks`, `Report.to_text`), the JSON document (`Report.to_json`)
and the HTML page (`Report.write_html`) are all drawn from the same `Report`, so they
can never disagree about a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from kaudit._atomic import write_atomic
from kaudit._require import require_probability
from kaudit.errors import KauditError
from kaudit.grade import judge_tables
from kaudit.ledger import Anchor, RunSummary, Snapshot, open_ledger, reader_anchor
from kaudit.ledger._outputs import refuse_sqlite_output
from kaudit.ledger._parse import record_data
from kaudit.ledger._snapshot import open_rows
from kaudit.report._cells import FIXED_K_METHOD, CampaignReport, CellRow, build_report
from kaudit.report._derived import Derived
from kaudit.report._economics import ModelEconomics
from kaudit.report._faults import ExposureSummary
from kaudit.report._grading import GraderResult
from kaudit.report._html import HtmlOptions, html_page
from kaudit.report._judging import judge_text_tables, rbm_lines
from kaudit.report._reading import Reading
from kaudit.report._referee import (
    RefereeReport,
    disagreement_lines,
    referee_report,
    referee_tables,
)
from kaudit.report._stopping import sequential_campaigns, stopping_rules
from kaudit.report._tables import Block, TextTable
from kaudit.report._terminal import ANYTIME_MARK, terminal_tables
from kaudit.report._viewer import RunViewer
from kaudit.report._viewer_build import ViewerBuild

REFEREED_SUITES = ("agentdojo:",)
"""Suites whose runs carry their own checks' judgment (`extra["agentdojo"]`)."""


@dataclass(frozen=True)
class Report(Reading):
    """A ledger's runs and everything `kaudit report` shows of them.

    What it stands on (verified, anchor, judges) is `Reading`'s, shared with `StatsReport`.

    Attributes:
        ledger: The ledger file.
        campaign: The campaign reported, None for every campaign.
        alpha: Intervals are at 1 - alpha.
        runs: Each counted run once (its newest attempt), in append order.
        summary: The cells with their intervals, run counts, faults and boundary attempts.
        stopping_rules: Each campaign's stopping rule sentence (empty: none recorded).
        referee: The suite's own checks beside kaudit's, for a refereed suite.
        chain_head: The stored hash of the last record read (the head `verified` checked).
        pending_viewer: The run viewer being built beside the read (`read_report(...,
            viewer=True)`), which `write_html` takes if it holds the records counted here.
        memo: A `Derived` of `runs` that `summary` was built from, shared with the tables
            and the page (made on first use when None).
    """

    ledger: Path
    campaign: str | None
    alpha: float
    runs: tuple[RunSummary, ...]
    summary: CampaignReport
    stopping_rules: dict[str, str]
    referee: RefereeReport | None = None
    chain_head: str | None = None
    pending_viewer: ViewerBuild | None = field(default=None, repr=False, compare=False)
    memo: Derived | None = field(default=None, repr=False, compare=False)
    source: Snapshot | None = field(default=None, repr=False, compare=False)
    """The open snapshot the report was read from, whose records the page's viewer shows."""
    verified_hashes: tuple[bytes, ...] = field(default=(), repr=False, compare=False)
    """Each row's hash as the verified read computed it (empty: unverified), so a page
    written after the snapshot closed shows only rows that still hash to it."""

    @property
    def cells(self) -> tuple[CellRow, ...]:
        """Every (model, task version) cell: n, damage, exact interval, safe^n."""
        return self.summary.cells

    @property
    def exposure(self) -> ExposureSummary:
        """Faults injected and boundary attempts refused, over every run."""
        return self.summary.exposure

    @property
    def sequential(self) -> frozenset[str]:
        """Campaigns stopped by a sequential rule: their cells get anytime-valid intervals."""
        return sequential_campaigns(self.runs)

    @cached_property
    def _derived(self) -> Derived:
        # The page and the tables share it: each number they both show is made once.
        return Derived(self.runs) if self.memo is None else self.memo

    def economics(self, seed: int = 0) -> list[ModelEconomics]:
        """Damage dollars per run and per 1,000 runs, spend, and a risk-loaded price."""
        return list(self._derived.economics(alpha=self.alpha, seed=seed))

    def grading(self) -> list[GraderResult]:
        """Transcript graders against the state verdicts: what reading the words misses."""
        return list(self._derived.grading())

    def tables(self) -> list[TextTable]:
        """The per-model cell and mix tables, stack health, pools, grading and economics."""
        return terminal_tables(
            self.runs,
            self.alpha,
            sequential_campaigns=self.sequential,
            report=self.summary,
            derived=self._derived,
        )

    def blocks(self, html: Path | None = None) -> list[Block]:
        """The text report in print order: lines and groups of tables.

        `html` is the page written beside it (`write_html`), named in the last line.
        """
        built = self.summary
        blocks: list[Block] = []
        if not self.verified:
            blocks.append("note: --no-verify: the ledger's hash chain was not checked")
        blocks.append(f"{built.runs} runs, {built.invalid} invalid (recorded, never counted)")
        blocks.append(tuple(self.tables()))
        blocks += [f"campaign {n}: stopping rule {r}" for n, r in self.stopping_rules.items() if r]
        blocks += [
            f"{ANYTIME_MARK} sequentially stopped cell: anytime-valid interval "
            f"({method}), not the fixed-k Clopper-Pearson one"
            for method in sorted({c.interval for c in built.cells if c.interval != FIXED_K_METHOD})
        ]
        blocks += exposure_lines(built)
        if self.referee is not None:
            blocks.append(tuple(referee_tables(self.referee)))
            blocks += disagreement_lines(self.referee)
        if self.judges:
            blocks.append(tuple(judge_text_tables(self.judges, self.runs, self.alpha)))
        blocks += rbm_lines(self.judges)
        if html is not None:
            blocks.append(f"HTML report -> {html}")
        return blocks

    def to_json(self) -> dict[str, Any]:
        """The `kaudit report --json` document (an undefined number is a float NaN here)."""
        return (
            self.summary.to_json()
            | {"stopping_rules": self.stopping_rules}
            | self.evidence()
            | ({"referee": self.referee.to_json()} if self.referee is not None else {})
        )

    def _viewer(self) -> RunViewer:
        """The run viewer of the records counted here, the forked one if it read those.

        Records 1 … upto, never one appended since; unverified, the whole file as it
        stands (its rows' numbers need not be positions).
        """
        upto: int | None = None
        head: str | None = None
        if self.verified:
            upto = self.records if self.anchored_records is None else self.anchored_records
            head = self.chain_head if upto == self.records else None
        if self.pending_viewer is not None:
            viewer = self.pending_viewer.take(upto, head, self.verified_hashes)
            if viewer is not None:
                return viewer
        if self.source is not None and self.source.is_open:
            shown = RunViewer()
            for data, size in self.source.documents(self.campaign):
                shown.add_data(data, size)
            return shown
        # The snapshot is closed: each row read again is checked against the hash the
        # verified read computed for it (LedgerError if it changed since).
        shown = RunViewer()
        with open_rows(self.ledger) as store, store.snapshot():
            rows = store.checked_bodies(self.campaign, False, upto, self.verified_hashes)
            for seq, body in rows:
                shown.add_data(record_data(self.ledger, seq, body), len(body))
        return shown

    def write_html(
        self, path: str | Path, model_order: Sequence[str] | None = None, title: str | None = None
    ) -> Path:
        """Write one self-contained page with figures and a run viewer; returns `path`.

        The numbers are this report's; the run viewer shows each run's transcript and
        diff, so it reads each record's JSON once more, one at a time, never all held at
        once. A kill or a full disk leaves the previous page intact. `path` may not be
        the ledger or any other SQLite file (KauditError, nothing written).
        """
        target = Path(path)
        refuse_sqlite_output(target, self.ledger)
        options = HtmlOptions(
            alpha=self.alpha,
            model_order=None if model_order is None else tuple(model_order),
            title=title or f"kaudit report: {self.ledger.name}",
            sequential_campaigns=tuple(self.sequential),
            judges=self.judges,
        )
        # `read_report` kept only each run's summary; the counts, tables and figures come
        # from what it verified, the viewer from the records' JSON.
        page = html_page(self.runs, self.summary, self._viewer(), options, self._derived)
        try:
            write_atomic(target, page)
        except OSError as exc:
            raise KauditError(f"{target}: cannot write the HTML report: {exc.strerror}") from None
        return target


def exposure_lines(report: CampaignReport) -> list[str]:
    """Faults injected (with the outcome mix of runs that hit each) and boundary attempts."""
    lines = []
    for kind, count in report.exposure.faults.items():
        mix = ", ".join(f"{n} {o}" for o, n in report.exposure.fault_outcomes[kind].items())
        lines.append(f"faults {kind}: {count} injected; runs that hit it: {mix}")
    for cell in report.cells:
        if cell.boundary_attempts:
            lines.append(
                f"boundary attempts refused: {cell.boundary_attempts} in {cell.model} / {cell.task}"
            )
    return lines


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

    `viewer` says a page will be written (`Report.write_html`): its run viewer is then
    built by a second process during the read, where that is possible and pays
    (`kaudit.report._viewer_build`); the page is the same either way.

    Given a path, the file is opened with `kaudit.open`: a broken chain raises
    `LedgerError` naming the first bad record unless `verify` is False; with `head` (a
    head hex, `kaudit ledger head --json` output, its file, or an `Anchor`) the chain
    must still hold that anchor and records after it are not counted; the grades chain
    must hold the grade it pins, and only grades up to it reach the judge tables;
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
    return Report(
        ledger=snapshot.path,
        campaign=campaign,
        alpha=alpha,
        runs=runs,
        summary=build_report(runs, alpha, sequential_campaigns(runs), memo.tallies()),
        memo=memo,
        stopping_rules=stopping_rules(runs),
        judges=judges,
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
