"""The task file: what the agent is asked, what it may touch, and how a run is judged."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kaudit.spec._damage import PARAM_REFERENCE, DamageSpec
from kaudit.spec._faults import FaultRule
from kaudit.spec._identity import Identity
from kaudit.spec._script import Expected, Script, ScriptStep

Irreversibility = Literal["substrate", "governance"]
Comparison = Literal["equals", "not_equals", "greater_than", "less_than", "at_least", "at_most"]
ORDERINGS = frozenset({"greater_than", "less_than", "at_least", "at_most"})
"""Comparisons that order values: `expected` must then be a number."""

VARIANT_MARK = "~"
"""Marks generated variant ids (`<task>~distractors`); a task file may not use it, so a
generated variant can never replace a task of the same name."""


def is_number(value: Any) -> bool:
    """Whether `value` is a finite int or float (a YAML `true` is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


class Check(BaseModel):
    """A success verifier: one SQL query whose single value is compared to `expected`.

    `$task.<param>` inside `sql` is bound as a query parameter, never pasted as text.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    sql: str
    expected: Any = Field(description="One value: text, a number, true/false or null.")
    compare: Comparison = "equals"

    @field_validator("expected")
    @classmethod
    def _one_value(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str | int | float):
            raise ValueError(
                f"must be one value (text, a number, true/false or null), "
                f"not a {type(value).__name__}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"must be a finite number, not {value}")
        return value

    @model_validator(mode="after")
    def _orderable(self) -> Check:
        if self.compare in ORDERINGS and not is_number(self.expected):
            raise ValueError(
                f"check {self.name!r}: compare {self.compare} needs a number as expected, "
                f"got {self.expected!r}"
            )
        return self


class Distractor(BaseModel):
    """How to make a look-alike variant: clone one row `count` times with near-duplicate text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    like: dict[str, Any] = Field(min_length=1, description="Key columns of the row to clone.")
    count: int = Field(10, ge=1, le=200)
    vary: tuple[str, ...] = Field((), description="Text columns given near-duplicate values.")


class ExtraRows(BaseModel):
    """Rows added to the world before every run of this task (part of its initial state)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    rows: tuple[dict[str, Any], ...] = Field(min_length=1)


class Task(BaseModel):
    """One audit task; loads from YAML with unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Unique id within the suite, e.g. 'itsm/change-cab-gate'.")
    vertical: str
    world: str = Field("enterprise", description="Registered world the task runs on.")
    irreversibility: Irreversibility = Field(
        description="'substrate': the damage cannot be undone by any tool (deletes, sends); "
        "'governance': a gate was bypassed at commit, which resetting a column cannot undo."
    )
    lever: str | None = Field(None, description="Failure mode the task is built to elicit.")
    rationale: str
    system_prompt: str
    prompt: str
    tools: tuple[str, ...] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    checks: tuple[Check, ...] = Field(min_length=1)
    damage: DamageSpec
    refusal_token: str = "REFUSAL:"
    convention: Literal["kaudit", "agentrelbench"] = Field(
        "kaudit",
        description="Whose reading of errored and stalled runs labels this task: "
        "'agentrelbench' (errored runs get no verifier; a stalled run's last message is "
        "scanned for the refusal token), as imported AgentRelBench tasks are published.",
    )
    max_steps: int = Field(30, ge=1)
    oracle: tuple[ScriptStep, ...] = Field(min_length=1)
    counterexamples: tuple[Script, ...] = ()
    distractors: tuple[Distractor, ...] = Field(
        (), description="Look-alike rows for the generated distractor variant of this task."
    )
    extra_rows: tuple[ExtraRows, ...] = Field(
        (), description="Rows added to the template before every run (set by variants)."
    )
    reference_weights: dict[str, float] = Field(
        default_factory=dict,
        description="Weights of the simulated reference agent over 'oracle' and the "
        "counterexample names; empty means uniform.",
    )
    faults: tuple[FaultRule, ...] = Field(
        (), description="Commit-boundary faults injected into every run of this task."
    )
    identity: Identity | None = Field(
        None, description="The identity runs act as; overrides the campaign's."
    )

    @field_validator("id")
    @classmethod
    def _not_a_variant_id(cls, value: str) -> str:
        if VARIANT_MARK in value:
            raise ValueError(f"{value!r}: {VARIANT_MARK!r} is reserved for generated variant ids")
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("reference_weights")
    @classmethod
    def _finite_weights(cls, value: dict[str, float]) -> dict[str, float]:
        for name, weight in value.items():
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"{name}: must be a finite number >= 0, got {weight}")
        return value

    @field_validator("tools")
    @classmethod
    def _unique_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("a tool is listed twice")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        missing = self.damage.param_references() - set(self.params)
        if missing:
            raise ValueError(f"damage rules use undefined params: {sorted(missing)}")
        for check in self.checks:
            undefined = set(PARAM_REFERENCE.findall(check.sql)) - set(self.params)
            if undefined:
                raise ValueError(f"check {check.name!r} uses undefined params: {sorted(undefined)}")
        names = [script.name for script in self.counterexamples]
        if len(set(names)) != len(names) or "oracle" in names:
            raise ValueError("counterexample names must be unique and not 'oracle'")
        unknown = set(self.reference_weights) - {"oracle", *names}
        if unknown:
            raise ValueError(f"reference_weights name unknown scripts: {sorted(unknown)}")
        if self.reference_weights and sum(self.reference_weights.values()) <= 0:
            raise ValueError("reference_weights must not all be zero")
        return self

    @property
    def priced(self) -> bool:
        """Whether any pricing rule reads dollars from a money column."""
        return any(rule.dollars_from for rule in self.damage.pricing)

    def scripts(self) -> tuple[Script, ...]:
        """The oracle (which must PASS) followed by the counterexamples."""
        oracle = Script(name="oracle", expected=Expected(outcome="PASS"), steps=self.oracle)
        return (oracle, *self.counterexamples)

    def script(self, name: str) -> Script:
        """The script called `name` ('oracle' or a counterexample)."""
        for script in self.scripts():
            if script.name == name:
                return script
        raise KeyError(name)

    def weights(self) -> dict[str, float]:
        """Reference-agent weights over script names, normalized to sum to 1."""
        raw = self.reference_weights or {script.name: 1.0 for script in self.scripts()}
        total = sum(raw.values())
        return {name: weight / total for name, weight in raw.items() if weight > 0}

    def referenced_params(self) -> set[str]:
        """Params used by the damage rules or the checks."""
        used = self.damage.param_references()
        for check in self.checks:
            used |= set(PARAM_REFERENCE.findall(check.sql))
        return used
