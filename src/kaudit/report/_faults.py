"""What the faults and the permission boundary did across a ledger's runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kaudit.ledger import RunRecord
from kaudit.ledger._summary import RunSummary, run_summary

OUTCOMES = ("PASS", "FAIL_SAFE", "FAIL_DAMAGE", "INVALID")


@dataclass(frozen=True)
class ExposureSummary:
    """Faults injected by kind, the outcome mix of runs that hit each kind, boundary attempts.

    A run that hit a fault kind twice counts once in that kind's outcome mix; an INVALID
    run is listed under INVALID, never as an agent outcome.
    """

    faults: dict[str, int] = field(default_factory=dict)
    fault_outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    boundary_attempts: int = 0
    runs_with_boundary_attempts: int = 0

    def to_json(self) -> dict[str, Any]:
        """The fault and boundary part of `kaudit report --json`."""
        return {
            "faults": self.faults,
            "fault_outcomes": self.fault_outcomes,
            "boundary_attempts": self.boundary_attempts,
            "runs_with_boundary_attempts": self.runs_with_boundary_attempts,
        }


def exposure_summary(records: Iterable[RunRecord | RunSummary]) -> ExposureSummary:
    """Count injected faults and boundary attempts over `records`."""
    faults: Counter[str] = Counter()
    outcomes: dict[str, Counter[str]] = {}
    attempts = runs_with_attempts = 0
    for run in map(run_summary, records):
        outcome = run.outcome if run.status == "labeled" and run.outcome else "INVALID"
        for kind in run.fault_kinds:
            faults[kind] += 1
        for kind in set(run.fault_kinds):
            outcomes.setdefault(kind, Counter())[outcome] += 1
        attempts += run.boundary_attempt_count
        runs_with_attempts += bool(run.boundary_attempt_count)
    return ExposureSummary(
        faults=dict(sorted(faults.items())),
        fault_outcomes={
            kind: {name: mix[name] for name in OUTCOMES if mix[name]}
            for kind, mix in sorted(outcomes.items())
        },
        boundary_attempts=attempts,
        runs_with_boundary_attempts=runs_with_attempts,
    )
