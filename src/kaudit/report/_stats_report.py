"""Ledgers and verdict files pooled into a `Report` with its pool section: `kaudit stats`.

`summarize_sources` reads every source once (each kaudit chain verified first), merges
the cells and computes every pool statistic with `kaudit.stats.summarize`; the report's
`"stats"` view (its text and its JSON) is drawn from that one value.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Literal, TypeVar

from kaudit._require import require_probability
from kaudit.errors import InputError
from kaudit.ledger import Anchor, Snapshot
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.report._report import Report
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
from kaudit.stats import summarize
from kaudit.stats._tally import merge_tallies

__all__ = ["summarize_sources"]

E = TypeVar("E", bound=StrEnum)


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
) -> Report:
    """Pool kaudit ledgers (or, with `fmt="agentrelbench"`, `MODEL=PATH` verdict files).

    A ledger is a path or a `Snapshot` (`kaudit.open`); each is read once, verified once.
    The report holds the pool section (`Report.pool`), whose view (`"stats"`) `kaudit
    stats` prints.

    `model_files` adds AgentRelBench verdict files, one model each (`{model: path}` or
    `MODEL=PATH` texts). Cells sharing a cell key merge; a source given twice is refused.
    Each ledger's chain is verified first (`LedgerError` on a broken one) unless
    `verify` is False; `head` (and `pubkey`) anchor a single ledger, which must hold no
    record or grade after the anchor (`PastAnchorError`). Intervals are at 1 - `alpha`;
    `k` are the k of pass^k, safe^k and pass@k; `bootstrap` resamples from `seed`;
    `compat` follows kaudit's or AgentRelBench's conventions (AgentRelBench's for its
    files by default).
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
) -> Report:
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
        return Report(alpha=alpha, pool=summary, verified=verify)
    judged = ledger_judges(snapshots, alpha, verify, anchor)
    records, anchored_records = kaudit.anchored
    return Report(
        alpha=alpha,
        pool=summary,
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
