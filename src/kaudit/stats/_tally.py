"""The unit every statistic consumes: one (model, task) cell's run counts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from kaudit.errors import InputError

__all__ = ["CellKey", "CellTally", "distinguish_versions", "merge_tallies", "versioned_names"]


@dataclass(frozen=True)
class CellTally:
    """Counts for one (model, task) cell: n independent runs on freshly seeded worlds.

    Attributes:
        model: The model (or agent) name.
        task: The task identifier.
        n: Number of counted runs (INVALID runs are never counted).
        damage: Runs whose final state holds damage (the strict label).
        damage_upper: Runs counted as damage under the inclusive label; the upper bound
            when a label is uncertain, so ``damage <= damage_upper``.
        success: Runs whose success checks passed.
        digest: The task version's digest (None when unknown, e.g. imported runs). Cells
            of different versions are never pooled; `distinguish_versions` names them
            ``task@digest8``.
        world: The world template's digest (None when unrecorded); see `CellKey`.
    """

    model: str
    task: str
    n: int
    damage: int
    damage_upper: int
    success: int
    digest: str | None = None
    world: str | None = None

    def __post_init__(self) -> None:
        if self.n < 0:
            raise InputError("n", f"of cell {self.model}/{self.task} is negative: {self.n}")
        for name in ("damage", "damage_upper", "success"):
            value = getattr(self, name)
            if not 0 <= value <= self.n:
                raise InputError(
                    name, f"of cell {self.model}/{self.task} is {value}, outside [0, n={self.n}]"
                )
        if self.damage_upper < self.damage:
            raise InputError(
                "damage_upper",
                f"of cell {self.model}/{self.task} is {self.damage_upper}, "
                f"below damage={self.damage}",
            )

    @property
    def phat(self) -> float:
        """Observed damage rate x/n; NaN for an empty cell."""
        return self.damage / self.n if self.n else float("nan")

    @property
    def task_id(self) -> str:
        """The task id without the ``@digest8[+world8]`` a version suffix may have added."""
        short = f"@{_short(self.digest)}"
        for suffix in (f"{short}+{_short(self.world)}", short):
            if self.task.endswith(suffix):
                return self.task[: -len(suffix)]
        return self.task

    @property
    def key(self) -> CellKey:
        """The cell's identity, whatever name it is printed under."""
        return CellKey(self.model, self.task_id, self.digest, self.world)


class CellKey(NamedTuple):
    """What makes runs one cell: runs differing in any field are never pooled.

    Every reader (report, stats, gate, monitor, economics, export) groups and matches runs
    by this key; the name a table prints (``task`` or ``task@digest8``) is derived from it
    by `versioned_names` and is never matched on. A tuple, not a dataclass: a report of
    10,000 runs hashes and compares keys about 500,000 times, and a dataclass's generated
    `__hash__`/`__eq__` took 0.3 s of it (tuple ones run in C).

    Attributes:
        model: The model (or agent) name.
        task: The task id, as the suite names it.
        digest: The run digest: the parsed task plus the campaign's faults and identity
            (None when unknown, e.g. imported runs).
        world: The world template's digest the run was seeded from (None for records
            written before kaudit recorded it, and for imported runs).
    """

    model: str
    task: str
    digest: str | None = None
    world: str | None = None

    def version(self) -> tuple[str | None, str | None]:
        """The task version: (digest, world)."""
        return (self.digest, self.world)


def _short(digest: str | None) -> str:
    return (digest or "unknown")[:8]


def versioned_names(keys: Iterable[CellKey]) -> dict[CellKey, str]:
    """The display name of each key's task: ``task@digest8`` when the task has several versions.

    A version is a (task digest, world digest) pair; when the versions of a task differ in
    their world, the name also carries ``+world8``. Counted over every model, so one
    version has one name in every view (cells, outcome mix, figures).
    """
    chosen = list(keys)
    versions: dict[str, set[tuple[str | None, str | None]]] = {}
    for key in chosen:
        versions.setdefault(key.task, set()).add(key.version())
    names: dict[CellKey, str] = {}
    for key in chosen:
        seen = versions[key.task]
        if len(seen) == 1:
            names[key] = key.task
            continue
        worlds = {world for _, world in seen}
        suffix = f"@{_short(key.digest)}"
        names[key] = key.task + suffix + (f"+{_short(key.world)}" if len(worlds) > 1 else "")
    return names


def distinguish_versions(tallies: Iterable[CellTally]) -> list[CellTally]:
    """Name cells ``task@digest8`` when one task id appears in several versions.

    A task whose spec or world changed measures something else; its cells stay apart and
    say so.
    """
    cells = list(tallies)
    names = versioned_names(t.key for t in cells)
    return [t if names[t.key] == t.task else replace(t, task=names[t.key]) for t in cells]


def merge_tallies(tallies: Iterable[CellTally]) -> list[CellTally]:
    """Pool tallies that share a (model, task, digest) into one cell, in first-seen order.

    Runs of one cell read from several files (batches) are more runs of the same cell,
    so their counts add; the same task id under another digest or world is another cell.
    """
    merged: dict[CellKey, list[int]] = {}
    for t in tallies:
        counts = merged.setdefault(t.key, [0, 0, 0, 0])
        counts[0] += t.n
        counts[1] += t.damage
        counts[2] += t.damage_upper
        counts[3] += t.success
    return distinguish_versions(
        CellTally(k.model, k.task, n, x, xu, s, k.digest, k.world)
        for k, (n, x, xu, s) in merged.items()
    )
