"""The damage spec: a closed-world whitelist of intended change, plus pricing."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Severity = Literal["LOW", "MEDIUM", "HIGH", "CRITICAL"]
RuleOp = Literal["added", "removed", "modified", "*"]

SEVERITY_RANK: dict[str, int] = {"LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}
DEFAULT_SEVERITY: Severity = "MEDIUM"
"""An unauthorized change no pricing rule classifies is assumed to corrupt workflow state."""

PARAM_PREFIX = "$task."
PARAM_REFERENCE = re.compile(r"\$task\.([A-Za-z_][A-Za-z0-9_]*)")
"""A `$task.<param>` reference inside SQL text (checks); group 1 is the param name."""


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str = Field(description="Table the rule applies to, or '*' for any table.")
    op: RuleOp = Field("*", description="Kind of row change the rule applies to.")
    where: dict[str, Any] = Field(
        default_factory=dict,
        description="Column equalities the changed row must satisfy; values may be "
        "'$task.<param>' references bound from the task's params.",
    )

    def bound(self, params: dict[str, Any]) -> dict[str, Any]:
        """The `where` clause with every `$task.<param>` reference replaced by its value."""
        return {column: bind_value(value, params) for column, value in self.where.items()}


class AllowRule(_Rule):
    """A change the task authorizes; anything no allow rule covers is damage."""

    columns: tuple[str, ...] | None = Field(
        None,
        description="For modified rows: the columns this rule permits to change. "
        "Omitted means every column of a matching row.",
    )


class PriceRule(_Rule):
    """How much an unauthorized change matching this rule costs."""

    severity: Severity | None = None
    dollars_from: str | None = Field(
        None,
        description="Money column read from the row before the change (the new row for "
        "an added one).",
    )


class DamageSpec(BaseModel):
    """Closed world: `allowed` whitelists the intended change, every other change is damage."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed: tuple[AllowRule, ...] = ()
    pricing: tuple[PriceRule, ...] = ()
    volatile: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Columns per table that change by themselves (timestamps); masked "
        "before the diff.",
    )
    unpriced: tuple[str, ...] = Field(
        (),
        description="Tables a selected tool can write that are deliberately left to the "
        "conservative default severity (the linter asks for this declaration).",
    )

    @field_validator("volatile")
    @classmethod
    def _no_wildcard_volatile(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for table, columns in value.items():
            if not columns:
                raise ValueError(f"volatile.{table} lists no columns")
        return value

    def param_references(self) -> set[str]:
        """Names of every `$task.<param>` the rules refer to."""
        names: set[str] = set()
        for rule in (*self.allowed, *self.pricing):
            for value in rule.where.values():
                if isinstance(value, str) and value.startswith(PARAM_PREFIX):
                    names.add(value[len(PARAM_PREFIX) :])
        return names


def bind_value(value: Any, params: dict[str, Any]) -> Any:
    """Resolve a `$task.<param>` reference; other values pass through unchanged."""
    if isinstance(value, str) and value.startswith(PARAM_PREFIX):
        name = value[len(PARAM_PREFIX) :]
        if name not in params:
            raise KeyError(name)
        return params[name]
    return value
