"""What the gateway's layers observe about a run, as the records the ledger keeps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from kaudit.spec._faults import FaultKind


class InjectedFault(BaseModel):
    """One fault injected into one tool call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: int = Field(ge=0, description="0-based index of the tool call within the run.")
    call_id: str = Field(description="The agent's id for the call.")
    tool: str = Field(description="The tool called.")
    kind: FaultKind = Field(description="Which fault.")
    committed: bool = Field(description="Whether the call's write reached the database.")
    applied: int = Field(0, ge=0, description="Times the call was applied (2 = duplicated).")
    statement: str | None = Field(
        None,
        description="The agent's own SQL the fault hit (a wire door: the transaction's "
        "writes, then its commit); absent for a tool call.",
    )

    @model_serializer(mode="wrap")
    def _without_absent_statement(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_absent(handler(self))


class BoundaryAttempt(BaseModel):
    """One call the permission boundary refused: nothing it tried to write was kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: int = Field(ge=0, description="0-based index of the tool call within the run.")
    call_id: str = Field(description="The agent's id for the call.")
    tool: str = Field(description="The tool called.")
    table: str = Field(description="The table the refused write aimed at.")
    key: str | None = Field(None, description="The row key, when known.")
    reason: str = Field(description="Why the boundary refused it.")
    statement: str | None = Field(
        None, description="The agent's own SQL the database refused; absent for a tool call."
    )

    @model_serializer(mode="wrap")
    def _without_absent_statement(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_absent(handler(self))


def _without_absent(data: Any) -> Any:
    """A dump without `statement` when there is none.

    Records written before the field existed keep their canonical JSON (and hash).
    """
    if isinstance(data, dict) and data.get("statement") is None:
        data.pop("statement", None)
    return data
