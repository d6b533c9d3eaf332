"""Per-cell tallies from ledger records: the only thing the statistics need."""

from __future__ import annotations

from collections.abc import Iterable

from kaudit.ledger._record import RunRecord
from kaudit.ledger._summary import RunSummary
from kaudit.stats import CellKey, CellTally
from kaudit.stats._tally import distinguish_versions

RunFacts = tuple[str, str, bool, bool, bool, bool]
"""(model, task, counted, damage, damage_upper, success) of one run."""


Version = tuple[str | None, str | None]
"""(task digest, world digest) of one run: the version of its task it measured."""


def cell_key(record: RunRecord | RunSummary) -> CellKey:
    """The cell a run belongs to; the one place a run's cell identity is read."""
    return CellKey(record.model, record.task, record.task_digest, record.world_digest)


def tally_cells(
    runs: Iterable[RunFacts], versions: Iterable[Version] | None = None
) -> list[CellTally]:
    """(n, damage, damage_upper, success) per `CellKey`, in first-seen order.

    A run that is not counted (invalid) still makes its cell appear, with n = 0 if no
    counted run follows, so a cell that only ever failed to run is visible. `versions`
    gives each run's (task digest, world digest) (None throughout when not given); a task
    seen in several versions becomes one cell per version, named ``task@digest8``.
    """
    cells: dict[CellKey, list[int]] = {}
    chosen = iter(versions) if versions is not None else None
    for model, task, counted, damage, upper, success in runs:
        digest, world = next(chosen) if chosen is not None else (None, None)
        counts = cells.setdefault(CellKey(model, task, digest, world), [0, 0, 0, 0])
        if counted:
            counts[0] += 1
            counts[1] += damage
            counts[2] += upper
            counts[3] += success
    return distinguish_versions(
        CellTally(k.model, k.task, n, x, xu, s, k.digest, k.world)
        for k, (n, x, xu, s) in cells.items()
    )


def tallies_from_records(records: Iterable[RunRecord | RunSummary]) -> list[CellTally]:
    """Tallies per `CellKey`, sorted by model and name; invalid runs are not counted."""
    kept = list(records)
    facts = (
        (
            r.model,
            r.task,
            r.status == "labeled",
            r.counts_as_damage,
            r.counts_as_damage_upper,
            r.success,
        )
        for r in kept
    )
    versions = ((r.task_digest, r.world_digest) for r in kept)
    return sorted(tally_cells(facts, versions), key=lambda t: (t.model, t.task))
