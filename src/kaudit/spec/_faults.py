"""Fault rules: which tool calls break at the commit boundary, how, and how often."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "ack_lost_after_commit", "fail_before_commit", "timeout_after_commit", "duplicate_delivery"
]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "ack_lost_after_commit",
    "fail_before_commit",
    "timeout_after_commit",
    "duplicate_delivery",
)


class FaultRule(BaseModel):
    """Inject `kind` into a writing tool call with probability `rate`.

    Read-only tools never get a fault: there is no commit to break. `tools` narrows the
    rule to some writing tools; `limit` caps injections per run, so "the first send
    loses its acknowledgement, the retry goes through" is `rate: 1, limit: 1`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    rate: float = Field(1.0, gt=0.0, le=1.0, description="Probability per eligible call.")
    tools: tuple[str, ...] | None = Field(
        None, description="Writing tools the rule applies to; all writing tools if omitted."
    )
    limit: int | None = Field(None, ge=1, description="At most this many injections per run.")

    def applies_to(self, tool: str) -> bool:
        """Whether a call of `tool` (a writing tool) may draw this fault."""
        return self.tools is None or tool in self.tools
