"""The identity a run acts as: role, organization scope, and the tables it may touch."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TableOp = Literal["read", "insert", "update", "delete"]


class Identity(BaseModel):
    """Who the agent is for one run; enforced beneath the agent, never told to it as policy.

    `scope` pins columns to values: a row of any table that has such a column may be
    written only when the column holds the value, before and after the write (another
    organization's rows are out of reach). `tables`, when given, is the complete list of
    tables with the operations allowed on each; anything else is refused. `user` is who
    requests and approves as this identity, so a tool can refuse self-approval.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str = Field(description="Role name, for records and reports.")
    user: str | None = Field(None, description="The user this identity acts as.")
    scope: dict[str, str] = Field(
        default_factory=dict, description="Column -> value every written row must carry."
    )
    tables: dict[str, tuple[TableOp, ...]] | None = Field(
        None, description="Allowed tables and operations; None allows every table."
    )

    def allows(self, table: str, op: TableOp) -> bool:
        """Whether `op` on `table` is inside the table grant."""
        return self.tables is None or op in self.tables.get(table, ())
