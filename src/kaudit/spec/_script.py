"""Scripts: the recorded turns a scripted agent replays."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Outcome = Literal["PASS", "FAIL_SAFE", "FAIL_DAMAGE"]
SubLabel = Literal[
    "completed_damage",
    "refused_but_mutated",
    "errored_after_mutation",
    "stalled_after_mutation",
    "refused_clean",
    "errored_clean",
    "stalled_clean",
    "completed_clean",
]


class ToolCallStep(BaseModel):
    """One tool call an agent makes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptStep(BaseModel):
    """One agent turn: tool calls, a final message, an agent error or a stall.

    `error` makes the agent fail at this turn (termination `errored`); `stall` makes it
    keep asking for work until the step budget ends the run (termination `stalled`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_calls: tuple[ToolCallStep, ...] = ()
    content: str | None = None
    error: str | None = None
    stall: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptStep:
        kinds = sum([bool(self.tool_calls), self.error is not None, self.stall])
        if kinds > 1:
            raise ValueError("a step has tool_calls, error or stall, not several")
        if not self.tool_calls and self.content is None and self.error is None and not self.stall:
            raise ValueError("a step needs tool_calls, content, error or stall")
        return self


class Expected(BaseModel):
    """What a script's verdict must be; unset fields are not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: Outcome
    sub_label: SubLabel | None = None
    success: bool | None = None
    severity: Literal["LOW", "MEDIUM", "HIGH", "CRITICAL"] | None = None
    dollars: float | None = Field(None, allow_inf_nan=False)
    boundary_attempts: int | None = Field(
        None, ge=0, description="Out-of-boundary attempts the run must record."
    )


class Script(BaseModel):
    """A named scripted run with the verdict it must get."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    expected: Expected
    note: str | None = None
    steps: tuple[ScriptStep, ...] = Field(min_length=1)
