"""Audit budgeting: runs turned into money and time from what a ledger measured per run."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kaudit._require import require_at_least, require_probability
from kaudit.errors import KauditError
from kaudit.ledger import Anchor, RunRecord, Snapshot, open_ledger
from kaudit.ledger._verify import VerifyReport
from kaudit.stats import runs_to_detect

__all__ = ["Budget", "RunCosts", "budget", "budgets_from_records", "format_duration", "run_costs"]


@dataclass(frozen=True)
class RunCosts:
    """Measured means per recorded run of one model (INVALID runs too: they were paid for).

    Attributes:
        model: The model.
        runs: Recorded runs the means stand on.
        dollars: Model dollars per run.
        input_tokens: Prompt tokens per run.
        output_tokens: Completion tokens per run.
        seconds: Wall-clock seconds per run, end to end.
    """

    model: str
    runs: int
    dollars: float
    input_tokens: float
    output_tokens: float
    seconds: float


@dataclass(frozen=True)
class Budget:
    """What an audit that sees damage of probability p with chance `detect` would cost.

    Attributes:
        costs: The measured per-run means it is built on.
        p: Damage probability per run to be seen.
        detect: Wanted chance of seeing it at least once per task.
        tasks: Tasks audited.
        runs_per_task: Runs per task (geometric waiting time, :func:`runs_to_detect`).
        concurrency: Runs in flight at once.
    """

    costs: RunCosts
    p: float
    detect: float
    tasks: int
    runs_per_task: int
    concurrency: int

    @property
    def runs(self) -> int:
        """Runs over all tasks."""
        return self.runs_per_task * self.tasks

    @property
    def dollars(self) -> float:
        """Model dollars for all runs at the measured mean."""
        return self.runs * self.costs.dollars

    @property
    def tokens(self) -> float:
        """Input plus output tokens for all runs."""
        return self.runs * (self.costs.input_tokens + self.costs.output_tokens)

    @property
    def seconds(self) -> float:
        """Wall-clock seconds with `concurrency` runs in flight and no other limit."""
        return self.runs * self.costs.seconds / self.concurrency

    @property
    def all_tasks_detect(self) -> float:
        """Chance that every one of the tasks sees its damage, runs independent across tasks.

        ``(1 − (1 − p)^k)^tasks``: `detect` is per task, and over many tasks the chance that
        none is missed is much lower (about 0.19 for 32 tasks at 95% each).
        """
        return (1.0 - (1.0 - self.p) ** self.runs_per_task) ** self.tasks

    @property
    def runs_per_task_all(self) -> int:
        """Runs per task for `detect` on all tasks at once (Šidák: 1 − detect^(1/tasks))."""
        return runs_to_detect(self.p, 1.0 - self.detect ** (1.0 / self.tasks))

    def to_json(self) -> dict[str, Any]:
        """One entry of `kaudit plan --from-ledger --json`."""
        return {
            "costs": asdict(self.costs), "p": self.p, "detect": self.detect,
            "tasks": self.tasks, "runs_per_task": self.runs_per_task, "runs": self.runs,
            "dollars": self.dollars, "tokens": self.tokens, "seconds": self.seconds,
            "concurrency": self.concurrency,
        }  # fmt: skip

    def sentence(self) -> str:
        """The plan in one line, as `kaudit plan --from-ledger` prints it."""
        return (
            f"{self.costs.model}: to see damage of probability {self.p:g} with "
            f"{self.detect:.0%} certainty per task on {self.tasks} tasks: {self.runs:,} runs "
            f"({self.runs_per_task} per task), ≈ ${self.dollars:,.2f}, "
            f"≈ {self.tokens:,.0f} tokens, ≈ {format_duration(self.seconds)} "
            f"at concurrency {self.concurrency}; chance that all {self.tasks} tasks see it: "
            f"{self.all_tasks_detect:.2f} ({self.detect:.0%} on all takes "
            f"{self.runs_per_task_all} per task)"
        )


def run_costs(records: Iterable[RunRecord]) -> list[RunCosts]:
    """Per-run means of dollars, tokens and seconds for each model, sorted by model."""
    sums: dict[str, list[float]] = {}
    for r in records:
        row = sums.setdefault(r.model, [0, 0.0, 0.0, 0.0, 0.0])
        row[0] += 1
        row[1] += r.cost_usd
        row[2] += r.input_tokens
        row[3] += r.output_tokens
        row[4] += r.timing.total_ms / 1000.0
    return [
        RunCosts(model, int(n), d / n, i / n, o / n, s / n)
        for model, (n, d, i, o, s) in sorted(sums.items())
    ]


def budget(costs: RunCosts, p: float, detect: float, tasks: int, concurrency: int) -> Budget:
    """The cost of an audit of `tasks` tasks sized to see damage of probability `p`."""
    require_at_least("tasks", tasks, 1)
    require_at_least("concurrency", concurrency, 1)
    require_probability("detect", detect)
    per_task = runs_to_detect(p, 1.0 - detect)
    return Budget(costs, p, detect, tasks, per_task, concurrency)


def budgets_from_records(
    records: Iterable[RunRecord],
    p: float,
    detect: float = 0.95,
    tasks: int | None = None,
    concurrency: int = 1,
) -> list[Budget]:
    """One :class:`Budget` per model of the records; `tasks` defaults to the tasks seen.

    Raises KauditError when there is no record to measure from.
    """
    runs = list(records)
    if not runs:
        raise KauditError("the ledger of `from_ledger` has no runs to measure costs from")
    require_probability("p", p, one=True)
    count = len({r.task for r in runs}) if tasks is None else tasks
    return [budget(costs, p, detect, count, concurrency) for costs in run_costs(runs)]


def format_duration(seconds: float) -> str:
    """Seconds as '45 s', '12 min', '3 h 05 min' or '2 d 4 h'."""
    if math.isnan(seconds):
        return "unknown time"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def ledger_budgets(
    ledger: Path | Snapshot,
    p: float,
    detect: float = 0.95,
    tasks: int | None = None,
    concurrency: int = 1,
    anchor: Anchor | None = None,
) -> tuple[list[Budget], VerifyReport]:
    """`budgets_from_records` of a ledger's runs, its chain verified first (with `anchor`).

    Also the chain check, for the reader's anchor note. Raises `KauditError` for a
    missing file, `LedgerError` for a broken chain.
    """
    if isinstance(ledger, Snapshot):
        return _budgets(ledger, p, detect, tasks, concurrency)
    if not ledger.is_file():
        raise KauditError(f"{ledger}: no such ledger file")
    with open_ledger(ledger, head=anchor) as snapshot:
        return _budgets(snapshot, p, detect, tasks, concurrency)


def _budgets(
    snapshot: Snapshot, p: float, detect: float, tasks: int | None, concurrency: int
) -> tuple[list[Budget], VerifyReport]:
    checked = VerifyReport(
        records=snapshot.records,
        head=snapshot.head,
        anchored=snapshot.anchor is not None,
        anchored_records=snapshot.anchored_records,
    )
    records = snapshot.full_records()
    return budgets_from_records(records, p, detect, tasks, concurrency), checked
