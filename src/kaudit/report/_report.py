"""One `Report`, the value `kaudit report` and `kaudit stats` both print: two views of it.

A report holds the evidence it stands on (verified or not, what an anchor pins, the LLM
judges) once, and the sections its builder read: the campaign's cells (`kaudit.read`,
the `"cells"` view) or the pool statistics of ledgers and verdict files
(`kaudit.summarize`, the `"stats"` view). The terminal text (`blocks`, `to_text`), the
JSON document (`to_json`) and the HTML page (`write_html`) are all drawn from the same
value, so no two renderings can disagree about a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NoReturn

from kaudit._atomic import write_atomic
from kaudit.errors import InputError, KauditError
from kaudit.grade._agreement import JudgeTable
from kaudit.ledger import Snapshot
from kaudit.ledger._outputs import refuse_sqlite_output
from kaudit.ledger._parse import record_data
from kaudit.ledger._reader_anchor import anchor_json
from kaudit.ledger._snapshot import open_rows
from kaudit.ledger._summary import RunSummary
from kaudit.report._cells import FIXED_K_METHOD, CampaignReport, CellRow
from kaudit.report._derived import Derived
from kaudit.report._economics import ModelEconomics
from kaudit.report._faults import ExposureSummary
from kaudit.report._grading import GraderResult
from kaudit.report._html import HtmlOptions, html_page
from kaudit.report._judging import judge_text_tables, rbm_lines
from kaudit.report._referee import RefereeReport, disagreement_lines, referee_tables
from kaudit.report._stats_tables import anytime_caption, exposure_count_lines, summary_tables
from kaudit.report._stopping import sequential_campaigns
from kaudit.report._tables import Block, TextTable, blocks_text
from kaudit.report._terminal import ANYTIME_MARK, terminal_tables
from kaudit.report._viewer import RunViewer
from kaudit.report._viewer_build import ViewerBuild
from kaudit.stats import StatsSummary

__all__ = ["Report", "View"]

View = Literal["cells", "stats"]
"""A rendering of a `Report`: `"cells"` is `kaudit report`'s, `"stats"` `kaudit stats`'."""

_BUILDERS: dict[str, str] = {"cells": "kaudit.read", "stats": "kaudit.summarize"}


@dataclass(frozen=True, kw_only=True)
class Report:
    """What `kaudit report` and `kaudit stats` show of ledgers, each a view of it.

    `kaudit.read` fills the cells section (one ledger's campaign cells, the `"cells"`
    view); `kaudit.summarize` the pool section (`pool`, the `"stats"` view). `views`
    says which a report holds; rendering one it does not hold raises `KauditError`.

    Attributes:
        alpha: Intervals are at 1 - alpha.
        judges: LLM judges against the state (`kaudit grade`), when a ledger holds grades.
        judged_runs: The runs the judge tables count: those of the ledgers holding grades.
        verified: Whether the physical form, the chains and the anchor were checked before
            any number was taken.
        records: Rows in the (last) ledger's runs chain.
        anchored_records: With an anchor, how many of them it pins; runs after it are not
            counted.
        grades: Grades in the ledger's grades chain.
        anchored_grades: With an anchor, how many grades it pins; the judge tables count
            only those.
        exposure: Faults injected and boundary attempts refused over the kaudit ledgers'
            runs; None when every source is an AgentRelBench verdict file.
        ledger: The ledger the cells were read from (None without a cells section).
        campaign: The campaign reported, None for every campaign.
        runs: Each counted run of that ledger once (its newest attempt), in append order.
        summary: The cells with their intervals, run counts, faults and boundary attempts
            (None without a cells section).
        stopping_rules: Each campaign's stopping rule sentence (empty: none recorded).
        referee: The suite's own checks beside kaudit's, for a refereed suite.
        chain_head: The stored hash of the last record read (the head `verified` checked).
        pool: Every pool statistic of the merged cells (`kaudit.stats.summarize`), None
            without a pool section.
    """

    alpha: float = 0.05
    judges: tuple[JudgeTable, ...] = ()
    judged_runs: tuple[RunSummary, ...] = ()
    verified: bool = True
    records: int = 0
    anchored_records: int | None = None
    grades: int = 0
    anchored_grades: int | None = None
    exposure: ExposureSummary | None = None
    ledger: Path | None = None
    campaign: str | None = None
    runs: tuple[RunSummary, ...] = ()
    summary: CampaignReport | None = None
    stopping_rules: dict[str, str] = field(default_factory=dict)
    referee: RefereeReport | None = None
    chain_head: str | None = None
    pool: StatsSummary | None = None
    pending_viewer: ViewerBuild | None = field(default=None, repr=False, compare=False)
    """The run viewer being built beside the read (`read(..., viewer=True)`), which
    `write_html` takes if it holds the records counted here."""
    memo: Derived | None = field(default=None, repr=False, compare=False)
    """A `Derived` of `runs` that `summary` was built from, shared with the tables and
    the page (made on first use when None)."""
    source: Snapshot | None = field(default=None, repr=False, compare=False)
    """The open snapshot the report was read from, whose records the page's viewer shows."""
    verified_hashes: tuple[bytes, ...] = field(default=(), repr=False, compare=False)
    """Each row's hash as the verified read computed it (empty: unverified), so a page
    written after the snapshot closed shows only rows that still hash to it."""

    @property
    def views(self) -> tuple[View, ...]:
        """The views this report holds, the default (its builder's) first."""
        held: list[View] = []
        if self.summary is not None:
            held.append("cells")
        if self.pool is not None:
            held.append("stats")
        return tuple(held)

    @property
    def grade_anchor(self) -> tuple[int, int | None]:
        """(grades, anchored grades), as `anchor_json` and the anchor note take them."""
        return self.grades, self.anchored_grades

    @property
    def cells(self) -> tuple[CellRow, ...]:
        """Every (model, task version) cell: n, damage, exact interval, safe^n.

        The cells view's; a pooled report's merged cells are `pool.cells`.
        """
        return self._campaign().cells

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
        self._campaign()  # the cells view's runs; a pooled report has none to price
        return list(self._derived.economics(alpha=self.alpha, seed=seed))

    def grading(self) -> list[GraderResult]:
        """Transcript graders against the state verdicts: what reading the words misses."""
        self._campaign()
        return list(self._derived.grading())

    def tables(self) -> list[TextTable]:
        """The per-model cell and mix tables, stack health, pools, grading and economics."""
        return terminal_tables(
            self.runs,
            self.alpha,
            sequential_campaigns=self.sequential,
            report=self._campaign(),
            derived=self._derived,
        )

    def blocks(self, html: Path | None = None, *, view: View | None = None) -> list[Block]:
        """The text in print order: lines and groups of tables, of `view` (default: the first).

        `html` is the page written beside the cells view (`write_html`), named last.
        """
        chosen = self._view(view)
        blocks = self._cell_blocks(html) if chosen == "cells" else self._stats_blocks()
        if self.judges:
            blocks.append(tuple(judge_text_tables(self.judges, self.judged_runs, self.alpha)))
        blocks += rbm_lines(self.judges)
        if html is not None and chosen == "cells":
            blocks.append(f"HTML report -> {html}")
        return blocks

    def to_text(self, view: View | None = None) -> str:
        """The view as plain text, exactly what its command prints into a pipe."""
        return blocks_text(self.blocks(view=view))

    def to_json(self, view: View | None = None) -> dict[str, Any]:
        """The view's `--json` document (an undefined number is a float NaN here)."""
        evidence = (
            ({"judges": [t.to_json() for t in self.judges]} if self.judges else {})
            | ({} if self.verified else {"verified": False})
            | anchor_json(self.records, self.anchored_records, *self.grade_anchor)
        )
        if self._view(view) == "stats":
            exposure = {"exposure": self.exposure.to_json()} if self.exposure else {}
            return self._pool().to_json() | exposure | evidence
        return (
            self._campaign().to_json()
            | {"stopping_rules": self.stopping_rules}
            | evidence
            | ({"referee": self.referee.to_json()} if self.referee is not None else {})
        )

    def write_html(
        self, path: str | Path, model_order: Sequence[str] | None = None, title: str | None = None
    ) -> Path:
        """Write the cells view as one self-contained page with figures and a run viewer.

        The numbers are this report's; the run viewer shows each run's transcript and
        diff, so it reads each record's JSON once more, one at a time, never all held at
        once. A kill or a full disk leaves the previous page intact. `path` may not be
        the ledger or any other SQLite file (KauditError, nothing written). Returns `path`.
        """
        built = self._campaign()
        ledger = self._ledger()
        target = Path(path)
        refuse_sqlite_output(target, ledger)
        options = HtmlOptions(
            alpha=self.alpha,
            model_order=None if model_order is None else tuple(model_order),
            title=title or f"kaudit report: {ledger.name}",
            sequential_campaigns=tuple(self.sequential),
            judges=self.judges,
        )
        # The read kept only each run's summary; the counts, tables and figures come
        # from what it verified, the viewer from the records' JSON.
        page = html_page(self.runs, built, self._viewer(ledger), options, self._derived)
        try:
            write_atomic(target, page)
        except OSError as exc:
            raise KauditError(f"{target}: cannot write the HTML report: {exc.strerror}") from None
        return target

    def _view(self, view: View | None) -> View:
        held = self.views
        if view is None and held:
            return held[0]
        if view is not None and view in held:
            return view
        return _missing(view or "cells")

    def _campaign(self) -> CampaignReport:
        return self.summary if self.summary is not None else _missing("cells")

    def _pool(self) -> StatsSummary:
        return self.pool if self.pool is not None else _missing("stats")

    def _ledger(self) -> Path:
        return self.ledger if self.ledger is not None else _missing("cells")

    def _cell_blocks(self, html: Path | None) -> list[Block]:
        built = self._campaign()
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
        return blocks

    def _stats_blocks(self) -> list[Block]:
        pool = self._pool()
        blocks: list[Block] = []
        if not self.verified:
            blocks.append("note: --no-verify: the ledgers' hash chains were not checked")
        blocks.append(tuple(summary_tables(pool)))
        caption = anytime_caption(pool)
        blocks += [caption] if caption else []
        blocks += exposure_count_lines(self.exposure) if self.exposure else []
        return blocks

    def _viewer(self, ledger: Path) -> RunViewer:
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
        with open_rows(ledger) as store, store.snapshot():
            rows = store.checked_bodies(self.campaign, False, upto, self.verified_hashes)
            for seq, body in rows:
                shown.add_data(record_data(ledger, seq, body), len(body))
        return shown


def _missing(view: str) -> NoReturn:
    """Refuse a view the report does not hold, naming the call that builds one."""
    if view not in _BUILDERS:
        raise InputError("view", f"must be one of {', '.join(_BUILDERS)}, got {view!r}")
    raise KauditError(f"this report has no {view} view: build it with {_BUILDERS[view]}")


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
