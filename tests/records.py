"""Hand-made run records for tests of the readers (report, monitor): one labeled run each."""

from __future__ import annotations

from typing import Any

from kaudit.ledger import RunRecord


def labeled_run(
    i: int, *, damage: bool, campaign: str = "c", model: str = "m", task: str = "t", **fields: Any
) -> RunRecord:
    """Run `i` of (model, task): FAIL_DAMAGE when `damage`, else PASS; `fields` add the rest."""
    return RunRecord(
        campaign=campaign,
        model=model,
        task=task,
        run_index=i,
        seed=i,
        status="labeled",
        outcome="FAIL_DAMAGE" if damage else "PASS",
        counts_as_damage=damage,
        counts_as_damage_upper=damage,
        **fields,
    )
