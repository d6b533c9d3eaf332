"""The sources `kaudit stats`, `plan` and `analyze` pool: ledgers and verdict files.

kaudit ledgers and AgentRelBench verdict files, each file read once and every chain
verified before its numbers are used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from kaudit.errors import InputError, KauditError
from kaudit.grade._agreement import JudgeTable
from kaudit.ledger import Anchor, Snapshot
from kaudit.ledger._summary import RunSummary
from kaudit.report._faults import ExposureSummary, exposure_summary
from kaudit.stats import CellKey, CellTally
from kaudit.stats._tally import merge_tallies


class LedgerFormat(StrEnum):
    """How ledger arguments are read."""

    kaudit = "kaudit"
    agentrelbench = "agentrelbench"


class Compat(StrEnum):
    """Whose conventions the statistics follow where two defensible readings differ."""

    kaudit = "kaudit"
    agentrelbench = "agentrelbench"


def model_file(spec: str) -> tuple[str, Path]:
    """`MODEL=PATH` (one model's AgentRelBench verdicts file) as (model, path)."""
    model, sep, path = spec.partition("=")
    if not sep or not model or not path:
        raise InputError("model_files", f"must look like MODEL=PATH, got {spec!r}")
    return model, Path(path)


def verdict_files(specs: Sequence[str]) -> list[tuple[str, Path]]:
    """Every `MODEL=PATH` as (model, path): the one parser of verdict-file arguments.

    `kaudit stats`, `plan`, `analyze` and `ledger import` all read them here. A file
    given twice (by where it resolves, under any model name) is refused: pooled, its
    runs would be counted twice, as twice the runs with the same damage.
    """
    parsed: list[tuple[str, Path]] = []
    seen: dict[Path, str] = {}
    for spec in specs:
        model, path = model_file(spec)
        first = seen.get(path.resolve())
        if first is not None:
            raise KauditError(
                f"verdict file {path} is given twice ({first!r} and {spec!r}): its runs "
                "would be counted twice"
            )
        seen[path.resolve()] = spec
        parsed.append((model, path))
    return parsed


def _read_agentrelbench(model: str, path: Path) -> list[CellTally]:
    from kaudit.ledger._agentrelbench import read_agentrelbench_verdicts, tallies_from_runs

    return tallies_from_runs(read_agentrelbench_verdicts(path, model))


def _read_kaudit(path: str, verify: bool = True) -> list[CellTally]:
    from kaudit.ledger._snapshot import read_tallies

    if not Path(path).is_file():
        raise KauditError(f"{path}: no such ledger file")
    return read_tallies(Path(path)) if verify else read_tallies(Path(path), verify=False)


def distinct_ledgers(snapshots: Sequence[Snapshot]) -> None:
    """Refuse one ledger given twice, by what it holds: a copy or a link counts twice too.

    Two files whose first records have the same hash start the same chain: one is a
    copy (or a hard link, or a later state) of the other, and pooling them would count
    each shared run twice with identical record hashes.
    """
    seen: dict[str, Path] = {}
    for snapshot in snapshots:
        if snapshot.records == 0:
            continue
        first = seen.setdefault(snapshot.identity, snapshot.path)
        if first != snapshot.path:
            raise KauditError(
                f"{snapshot.path} holds the same ledger as {first} (its first record "
                f"{snapshot.identity[:16]}… is the same): its runs would be counted twice"
            )


@dataclass(frozen=True)
class KauditSources:
    """What `stats` takes from kaudit ledgers, each read in one verifying pass.

    Attributes:
        cells: Tallies of every ledger, concatenated in argument order (not yet merged).
        sequential: (model, task, digest) cells holding a run of a sequentially stopped
            campaign.
        exposure: Faults and boundary attempts over every run of every ledger.
        prefix: With sequential campaigns, the tallies with each stopped cell cut to the
            runs its rule always gives (`kaudit.report._stopping.fixed_prefix_tallies`), else None.
        prefix_runs: The fewest such runs over the sequential campaigns.
        anchored: (records, anchored records) of the anchored ledger, with an anchor.
    """

    cells: list[CellTally]
    sequential: frozenset[CellKey]
    exposure: ExposureSummary
    prefix: list[CellTally] | None = None
    prefix_runs: int | None = None
    anchored: tuple[int, int | None] = (0, None)


def read_kaudit_sources(
    paths: Sequence[str | Snapshot], verify: bool = True, anchor: Anchor | None = None
) -> KauditSources:
    """Tallies, sequential cells and exposure of kaudit ledgers, one verified read each.

    Each source is a path (opened with `kaudit.open`: verified, LedgerError on a broken
    chain, unless `verify` is False) or an open `Snapshot`. An `anchor` pins a single
    ledger, refused if it holds records after the anchor. The same ledger twice (by its
    first record, so a copy or a link too) is refused.
    """
    if anchor is not None and len(paths) != 1:
        raise InputError("head", "anchors one ledger: give exactly one ledger with it")
    with contextlib.ExitStack() as stack:
        snapshots = [
            source
            if isinstance(source, Snapshot)
            else stack.enter_context(open_source(source, verify, anchor))
            for source in paths
        ]
        return _kaudit_sources(snapshots)


def open_source(path: str, verify: bool, anchor: Anchor | None) -> Snapshot:
    """A kaudit ledger argument opened with `kaudit.open` (KauditError when missing)."""
    from kaudit.ledger import open_ledger

    if not Path(path).is_file():
        raise KauditError(f"{path}: no such ledger file")
    return open_ledger(path, head=anchor, verify=verify)


def _kaudit_sources(snapshots: Sequence[Snapshot]) -> KauditSources:
    from kaudit.ledger._tally import tallies_from_records
    from kaudit.report._stopping import (
        cells_of_campaigns,
        chained_rule,
        fixed_prefix_tallies,
        guaranteed_runs,
        sequential_campaigns,
    )

    distinct_ledgers(snapshots)
    cells: list[CellTally] = []
    prefix: list[CellTally] = []
    floors: list[int] = []
    sequential: set[CellKey] = set()
    runs: list[RunSummary] = []
    anchored: tuple[int, int | None] = (0, None)
    for snapshot in snapshots:
        own = snapshot.runs()
        chosen = sequential_campaigns(own)
        # each run's chained record carries the rule it was admitted under
        cuts = {name: guaranteed_runs(chained_rule(snapshot, name)) or 1 for name in chosen}
        anchored = (snapshot.records, snapshot.anchored_records)
        cells += tallies_from_records(own)
        prefix += fixed_prefix_tallies(own, cuts)
        floors += cuts.values()
        sequential |= cells_of_campaigns(own, chosen)
        runs += own
    if not floors:
        return KauditSources(
            cells, frozenset(sequential), exposure_summary(runs), anchored=anchored
        )
    return KauditSources(
        cells, frozenset(sequential), exposure_summary(runs), prefix, min(floors), anchored
    )


def distinct_sources(ledgers: Sequence[str]) -> None:
    """Refuse a ledger given twice: its runs would be counted twice."""
    seen: set[Path] = set()
    for source in ledgers:
        resolved = Path(source).resolve()
        if resolved in seen:
            raise KauditError(f"{source} is given twice: its runs would be counted twice")
        seen.add(resolved)


def load_cells(
    ledgers: Sequence[str],
    model_files: Sequence[str],
    fmt: LedgerFormat,
    verify: bool = True,
    kaudit_cells: Sequence[CellTally] | None = None,
) -> list[CellTally]:
    """Read every source into one list of cells, merging cells that share a `CellKey`.

    A kaudit ledger's chain is verified before its numbers are used, unless `verify`
    is False. `kaudit_cells` are the kaudit ledgers' tallies when the caller has read
    them already (`read_kaudit_sources`), so no file is read twice.
    """
    files = [*ledgers, *model_files] if fmt == LedgerFormat.agentrelbench else model_files
    parsed = verdict_files(files)  # every verdict file once, whichever argument it came in
    if fmt != LedgerFormat.agentrelbench:
        distinct_sources(ledgers)
    cells: list[CellTally] = []
    if kaudit_cells is not None and fmt == LedgerFormat.kaudit:
        cells += kaudit_cells
    elif fmt == LedgerFormat.kaudit:
        for source in ledgers:
            cells += _read_kaudit(source, verify)
    for model, path in parsed:
        cells += _read_agentrelbench(model, path)
    if not cells:
        raise KauditError("no cells: give `ledgers` or `model_files` (MODEL=PATH)")
    return merge_tallies(cells)


def default_compat(fmt: LedgerFormat, model_files: Sequence[str]) -> Compat:
    """AgentRelBench sources follow AgentRelBench's conventions unless told otherwise."""
    return (
        Compat.agentrelbench if fmt == LedgerFormat.agentrelbench or model_files else Compat.kaudit
    )


def pool_sources(
    ledgers: Sequence[str], model_files: Sequence[str], fmt: LedgerFormat, pools: Sequence[str]
) -> tuple[dict[str, list[CellTally]], frozenset[CellKey]]:
    """Sources as ``[POOL=]PATH`` / ``[POOL:]MODEL=PATH``; unprefixed ones feed every pool.

    Each source is read once, then its cells are added to every pool it feeds. Also the
    cells of sequentially stopped campaigns, which claims judge with anytime bounds.
    """
    found: dict[str, list[CellTally]] = {name: [] for name in pools}
    files: dict[str, list[str]] = {name: [] for name in pools}  # verdict files fed to each
    stopped: set[CellKey] = set()
    fed: dict[tuple[str, str], str] = {}
    for source in ledgers:
        pool, sep, rest = source.partition("=")
        targets, path = ([pool], rest) if sep and pool in found else (list(found), source)
        identity = None
        if fmt == LedgerFormat.kaudit:
            with open_source(path, True, None) as snapshot:
                read = read_kaudit_sources([snapshot])
                identity = snapshot.identity if snapshot.records else None
            stopped |= read.sequential
            cells = load_cells([path], [], fmt, kaudit_cells=read.cells)
        else:
            cells = load_cells([path], [], fmt)
            for name in targets:
                files[name].append(path)
        for name in targets:
            if identity is not None:  # a copy or link of a ledger already in this pool
                first = fed.setdefault((name, identity), path)
                if first != path:
                    raise KauditError(
                        f"{path} holds the same ledger as {first}: its runs would be "
                        f"counted twice in pool {name!r}"
                    )
            found[name] += cells
    for spec in model_files:
        pool, sep, rest = spec.partition(":")
        targets, model_spec = ([pool], rest) if sep and pool in found else (list(found), spec)
        cells = load_cells([], [model_spec], LedgerFormat.agentrelbench)
        for name in targets:
            files[name].append(model_spec)
            found[name] += cells
    for fed_files in files.values():
        verdict_files(fed_files)  # a file fed twice to one pool: its runs counted twice
    return {name: merge_tallies(cells) for name, cells in found.items()}, frozenset(stopped)


@dataclass(frozen=True)
class LedgerJudges:
    """The judge tables of the kaudit ledgers `stats` reads, and what they were drawn from.

    Attributes:
        tables: Per judge, its overall table then one per cell (`judge_tables`).
        runs: The counted runs of the ledgers that hold grades.
        grades: Grades in the anchored ledger's grades chain (with an anchor).
        anchored_grades: With an anchor, how many of them it pins; only those count.
    """

    tables: list[JudgeTable] = field(default_factory=list)
    runs: list[RunSummary] = field(default_factory=list)
    grades: int = 0
    anchored_grades: int | None = None

    @property
    def grade_anchor(self) -> tuple[int, int | None]:
        """(grades, anchored grades), as `anchor_json` and the anchor note take them."""
        return self.grades, self.anchored_grades


def ledger_judges(
    ledgers: Sequence[str | Snapshot],
    alpha: float,
    verify: bool = True,
    anchor: Anchor | None = None,
) -> LedgerJudges:
    """Judge tables of every kaudit ledger that holds grades (`kaudit grade`), and its runs.

    Each source is a path (opened with `kaudit.open`, grades verified with the runs
    unless `verify` is False) or an open `Snapshot`. An `anchor` pins a single ledger:
    a ledger holding runs or grades after the anchor is refused.
    """
    from kaudit.grade._agreement import judge_tables

    if anchor is not None and len(ledgers) != 1:
        raise InputError("head", "anchors one ledger: give exactly one ledger with it")
    found = LedgerJudges()
    with contextlib.ExitStack() as stack:
        for source in ledgers:
            snapshot = (
                source
                if isinstance(source, Snapshot)
                else stack.enter_context(open_source(source, verify, anchor))
            )
            chain = snapshot.grades
            if snapshot.anchor is not None:
                found = replace(found, grades=chain.count, anchored_grades=chain.anchored)
            if not chain.counted:
                continue
            ledger_runs = snapshot.runs()
            found.tables.extend(judge_tables(ledger_runs, chain.counted, alpha))
            found.runs.extend(ledger_runs)
    return found
