"""A campaign's spending cap: no new run is started once its runs have spent it.

What the campaign has spent is read from its records (earlier invocations included), so
a campaign stopped by its cap resumes when called again with a higher one. Runs already
in flight when the cap is reached finish and are recorded: their money is spent, and a
run is never cut short behind the ledger's back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from kaudit.errors import KauditError
from kaudit.ledger import RunRecord

__all__ = ["CampaignBudget"]


@dataclass
class CampaignBudget:
    """`max_cost_usd` for the whole campaign; `spent_usd` is what its records cost so far."""

    max_cost_usd: float
    spent_usd: float = 0.0
    refused: int = 0
    """Runs this invocation did not start because the cap was spent."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.max_cost_usd) and self.max_cost_usd > 0):
            raise KauditError(f"campaign cost cap {self.max_cost_usd!r}: must be a positive number")

    @classmethod
    def over(cls, max_cost_usd: float, records: Iterable[RunRecord]) -> CampaignBudget:
        """The cap with what the campaign's existing records already spent."""
        return cls(max_cost_usd, sum(record.cost_usd for record in records))

    @property
    def spent(self) -> bool:
        """Whether no new run may start."""
        return self.spent_usd >= self.max_cost_usd

    def admit(self) -> bool:
        """Whether a new run may start; a refusal is counted."""
        if self.spent:
            self.refused += 1
            return False
        return True

    def add(self, record: RunRecord) -> None:
        """Count a recorded run's cost."""
        self.spent_usd += record.cost_usd

    def reason(self) -> str | None:
        """What to tell the user when the cap stopped runs; None when it did not."""
        if not self.refused:
            return None
        return (
            f"campaign cost cap reached: ${self.spent_usd:.6g} spent of "
            f"${self.max_cost_usd:g}; {self.refused} planned runs not started "
            "(run again with a higher cap to continue)"
        )
