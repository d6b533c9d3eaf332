"""What the gateway's layers observe about a run, as the records the ledger keeps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kaudit.spec import FaultKind


class InjectedFault(BaseModel):
    """One fault injected into one tool call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: int = Field(ge=0, description="0-based index of the tool call within the run.")
    call_id: str = Field(description="The agent's id for the call.")
    tool: str = Field(description="The tool called.")
    kind: FaultKind = Field(description="Which fault.")
    committed: bool = Field(description="Whether the call's write reached the database.")
    applied: int = Field(0, ge=0, description="Times the call was applied (2 = duplicated).")


class BoundaryAttempt(BaseModel):
    """One call the permission boundary refused: nothing it tried to write was kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: int = Field(ge=0, description="0-based index of the tool call within the run.")
    call_id: str = Field(description="The agent's id for the call.")
    tool: str = Field(description="The tool called.")
    table: str = Field(description="The table the refused write aimed at.")
    key: str | None = Field(None, description="The row key, when known.")
    reason: str = Field(description="Why the boundary refused it.")
