"""Stack health: how much of each cell measured the serving stack instead of the model.

A run that ends in an API error after every retry is still labeled (an error after a
mutation is damage), but a cell made mostly of them says how the serving stack behaved,
not how the model does; and a real model whose runs never call a tool may never have had
the tools. Both are counted per cell so a reader, and the gate, can tell.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kaudit.ledger._record import RunRecord
from kaudit.ledger._summary import RunSummary, run_summaries

__all__ = ["STACK_DOMINATED_SHARE", "CellKey", "StackHealth", "stack_health"]

STACK_DOMINATED_SHARE = 0.5
"""A cell with at least this share of runs ended by API errors measures the stack."""

CellKey = tuple[str, str, str | None]
"""(model, task, task digest), as `build_report` keys its cells."""


@dataclass(frozen=True)
class StackHealth:
    """One cell's counted runs that the serving stack ended, and those without a tool call."""

    n: int = 0
    api_errors: dict[str, int] = field(default_factory=dict)
    """Runs ended by an API error after all retries, by kind (`http_500`, `timeout`, …)."""
    no_tool_calls: int = 0
    """Runs in which the agent made no tool call at all."""
    dominated: float = STACK_DOMINATED_SHARE
    """The share of API-errored runs at which the cell measures the stack."""

    @property
    def api_error_runs(self) -> int:
        """Runs ended by any API error."""
        return sum(self.api_errors.values())

    @property
    def measures_stack(self) -> bool:
        """Whether stack errors dominate the cell, so its rates describe the stack."""
        return self.n > 0 and self.api_error_runs >= self.dominated * self.n


def stack_health(
    records: Iterable[RunRecord | RunSummary], dominated: float = STACK_DOMINATED_SHARE
) -> dict[CellKey, StackHealth]:
    """Per cell, over the counted (labeled) runs: API errors by kind and tool-less runs.

    `dominated` is the share of API-errored runs at which a cell measures the stack.
    """
    n: Counter[CellKey] = Counter()
    tool_less: Counter[CellKey] = Counter()
    errors: dict[CellKey, Counter[str]] = {}
    for run in run_summaries(records):
        if run.status != "labeled":
            continue
        key = (run.model, run.task, run.task_digest)
        n[key] += 1
        tool_less[key] += run.tool_call_count == 0
        if run.api_error is not None:
            errors.setdefault(key, Counter())[run.api_error] += 1
    return {
        key: StackHealth(
            count, dict(sorted(errors.get(key, Counter()).items())), tool_less[key], dominated
        )
        for key, count in n.items()
    }
