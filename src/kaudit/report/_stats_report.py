"""Ledgers and verdict files pooled into one `StatsReport`, the value `kaudit stats` prints.

`summarize_sources` reads every source once (each kaudit chain verified first), merges
the cells and computes every pool statistic with `kaudit.stats.summarize`; the text
(`StatsReport.blocks`, `to_text`) and the JSON (`to_json`) are drawn from that one value.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar

from kaudit._require import require_probability
from kaudit.errors import InputError
from kaudit.ledger import Anchor, RunSummary, Snapshot, reader_anchor
from kaudit.report._faults import ExposureSummary
from kaudit.report._judging import judge_text_tables, rbm_lines
from kaudit.report._reading import Reading
from kaudit.report._sources import (
    Compat,
    LedgerFormat,
    default_compat,
    distinct_sources,
    ledger_judges,
    load_cells,
    open_source,
    read_kaudit_sources,
)
from kaudit.report._stats_tables import anytime_caption, exposure_count_lines, summary_tables
from kaudit.report._tables import Block
from kaudit.stats import CellStats, StatsSummary, merge_tallies, summarize

__all__ = ["StatsReport", "summarize_sources"]

E = TypeVar("E", bound=StrEnum)


@dataclass(frozen=True)
class StatsReport(Reading):
    """Pooled statistics of ledgers and verdict files, and everything `kaudit stats` shows.

    What it stands on (verified, anchor, judges of each kaudit ledger holding grades) is
    `Reading`'s, shared with `Report`; `records` is the (last) kaudit ledger's chain.

    Attributes:
        summary: Every pool statistic of the merged cells (`kaudit.stats.summarize`).
        exposure: Faults and boundary attempts over the kaudit ledgers' runs; None when
            the sources are AgentRelBench verdict files.
        judged_runs: The runs of the ledgers holding grades, which the judge tables count.
    """

    summary: StatsSummary
    exposure: ExposureSummary | None = None
    judged_runs: tuple[RunSummary, ...] = ()

    @property
    def cells(self) -> tuple[CellStats, ...]:
        """Each merged cell: its tally, damage rate, interval, safe^k and pass^k."""
        return self.summary.cells

    def blocks(self) -> list[Block]:
        """The text in print order: lines and groups of tables."""
        blocks: list[Block] = []
        if not self.verified:
            blocks.append("note: --no-verify: the ledgers' hash chains were not checked")
        blocks.append(tuple(summary_tables(self.summary)))
        caption = anytime_caption(self.summary)
        blocks += [caption] if caption else []
        blocks += exposure_count_lines(self.exposure) if self.exposure else []
        if self.judges:
            tables = judge_text_tables(self.judges, self.judged_runs, self.summary.alpha)
            blocks.append(tuple(tables))
        blocks += rbm_lines(self.judges)
        return blocks

    def to_json(self) -> dict[str, Any]:
        """The `kaudit stats --json` document (an undefined number is a float NaN here)."""
        return (
            self.summary.to_json()
            | ({"exposure": self.exposure.to_json()} if self.exposure else {})
            | self.evidence()
        )


def summarize_sources(
    ledgers: Sequence[str | Path | Snapshot] = (),
    *,
    model_files: Sequence[str] | Mapping[str, str | Path] = (),
    fmt: LedgerFormat | str = LedgerFormat.kaudit,
    alpha: float = 0.05,
    eps: float = 0.05,
    k: Sequence[int] = (1, 2, 4, 8),
    bootstrap: int = 2000,
    seed: int = 0,
    interval: Literal["clopper-pearson", "wilson"] = "clopper-pearson",
    model_order: Sequence[str] | None = None,
    compat: Compat | str | None = None,
    verify: bool = True,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
) -> StatsReport:
    """Pool kaudit ledgers (or, with `fmt="agentrelbench"`, `MODEL=PATH` verdict files).

    A ledger is a path or a `Snapshot` (`kaudit.open`); each is read once, verified once.

    `model_files` adds AgentRelBench verdict files, one model each (`{model: path}` or
    `MODEL=PATH` texts). Cells sharing a cell key merge; a source given twice is refused.
    Each ledger's chain is verified first (`LedgerError` on a broken one) unless
    `verify` is False; `head` (and `pubkey`) anchor a single ledger, whose records and
    grades after the anchor are not counted. Intervals are at 1 - `alpha`; `k` are the k of pass^k,
    safe^k and pass@k; `bootstrap` resamples from `seed`; `compat` follows kaudit's or
    AgentRelBench's conventions (AgentRelBench's for its files by default).
    """
    require_probability("alpha", alpha)
    if not k or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in k):
        raise InputError("k", f"must be whole numbers >= 1, got {list(k)}")
    paths = [str(s.path if isinstance(s, Snapshot) else s) for s in ledgers]
    files = _model_file_specs(model_files)
    chosen_fmt = _choice(LedgerFormat, fmt, "fmt")
    distinct_sources(paths)
    anchor = reader_anchor(head, pubkey, not verify)
    if anchor is not None and chosen_fmt != LedgerFormat.kaudit:
        raise InputError("head", "anchors a kaudit ledger, not files read with `fmt` agentrelbench")
    if anchor is not None and len(paths) != 1:
        raise InputError("head", "anchors one ledger: give exactly one ledger with it")
    with contextlib.ExitStack() as stack:
        # Each ledger opened once, verified once; every number below comes from that read.
        snapshots = (
            [
                source
                if isinstance(source, Snapshot)
                else stack.enter_context(open_source(str(source), verify, anchor))
                for source in ledgers
            ]
            if chosen_fmt == LedgerFormat.kaudit
            else []
        )
        return _summarize(
            snapshots, paths, files, chosen_fmt, alpha, eps, k, bootstrap, seed, interval,
            model_order, compat, verify, anchor,
        )  # fmt: skip


def _summarize(
    snapshots: Sequence[Snapshot],
    paths: list[str],
    files: list[str],
    chosen_fmt: LedgerFormat,
    alpha: float,
    eps: float,
    k: Sequence[int],
    bootstrap: int,
    seed: int,
    interval: Literal["clopper-pearson", "wilson"],
    model_order: Sequence[str] | None,
    compat: Compat | str | None,
    verify: bool,
    anchor: Anchor | None,
) -> StatsReport:
    kaudit = (
        read_kaudit_sources(snapshots, verify, anchor)
        if chosen_fmt == LedgerFormat.kaudit
        else None
    )
    cells = load_cells(
        paths, files, chosen_fmt, kaudit_cells=None if kaudit is None else kaudit.cells
    )
    chosen = _choice(Compat, compat, "compat") if compat else default_compat(chosen_fmt, files)
    summary = summarize(
        cells, alpha=alpha, eps=eps, k_values=k, bootstrap=bootstrap, seed=seed,
        interval=interval, model_order=model_order,
        sequential=frozenset() if kaudit is None else kaudit.sequential,
        compat="agentrelbench" if chosen == Compat.agentrelbench else "kaudit",
        fixed_prefix=None if kaudit is None or kaudit.prefix is None
        else merge_tallies(kaudit.prefix),
        fixed_prefix_runs=None if kaudit is None else kaudit.prefix_runs,
    )  # fmt: skip
    if kaudit is None:
        return StatsReport(summary, verified=verify)
    judged = ledger_judges(snapshots, alpha, verify, anchor)
    records, anchored_records = kaudit.anchored
    return StatsReport(
        summary,
        exposure=kaudit.exposure,
        judges=tuple(judged.tables),
        judged_runs=tuple(judged.runs),
        verified=verify,
        records=records,
        anchored_records=anchored_records,
        grades=judged.grades,
        anchored_grades=judged.anchored_grades,
    )


def _model_file_specs(model_files: Sequence[str] | Mapping[str, str | Path]) -> list[str]:
    """`MODEL=PATH` texts, as `load_cells` reads them."""
    if isinstance(model_files, Mapping):
        return [f"{model}={path}" for model, path in model_files.items()]
    return list(model_files)


def _choice(kind: type[E], value: E | str, what: str) -> E:
    try:
        return kind(value)
    except ValueError:
        names = ", ".join(member.value for member in kind)
        raise InputError(what, f"must be one of {names}, got {value!r}") from None
