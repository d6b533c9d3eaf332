"""A run's spending caps, enforced where the money is spent: at the model proxy."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kaudit.errors import KauditError

__all__ = ["RunBudget"]


@dataclass(frozen=True)
class RunBudget:
    """At most `max_cost_usd` dollars and `max_tokens` tokens (input + output) per run.

    A call that crosses a cap is answered (its bytes were already on their way); the run
    then ends `stalled` and every later call is refused without reaching the upstream.
    """

    max_cost_usd: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.max_cost_usd is not None and not (
            math.isfinite(self.max_cost_usd) and self.max_cost_usd > 0
        ):
            raise KauditError(f"run cost cap {self.max_cost_usd!r}: must be a positive number")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise KauditError(f"run token cap {self.max_tokens!r}: must be at least 1")

    def spent(self, cost_usd: float, tokens: int) -> str | None:
        """Why the run is over its budget, or None while it is within it."""
        if self.max_cost_usd is not None and cost_usd >= self.max_cost_usd:
            return f"cost cap reached: ${cost_usd:.6g} spent of ${self.max_cost_usd:g} per run"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"token cap reached: {tokens} tokens spent of {self.max_tokens} per run"
        return None
