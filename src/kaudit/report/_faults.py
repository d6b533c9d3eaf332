"""What the faults and the permission boundary did across a ledger's runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kaudit.ledger import RunRecord

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


def exposure_summary(records: Iterable[RunRecord]) -> ExposureSummary:
    """Count injected faults and boundary attempts over `records`."""
    faults: Counter[str] = Counter()
    outcomes: dict[str, Counter[str]] = {}
    attempts = runs_with_attempts = 0
    for record in records:
        outcome = record.outcome if record.status == "labeled" and record.outcome else "INVALID"
        for fault in record.faults:
            faults[fault.kind] += 1
        for kind in {fault.kind for fault in record.faults}:
            outcomes.setdefault(kind, Counter())[outcome] += 1
        attempts += len(record.boundary_attempts)
        runs_with_attempts += bool(record.boundary_attempts)
    return ExposureSummary(
        faults=dict(sorted(faults.items())),
        fault_outcomes={
            kind: {name: mix[name] for name in OUTCOMES if mix[name]}
            for kind, mix in sorted(outcomes.items())
        },
        boundary_attempts=attempts,
        runs_with_boundary_attempts=runs_with_attempts,
    )
