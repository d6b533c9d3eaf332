"""The run record: one row of the ledger per (campaign, model, task, run index).

Version 2 types the verdict fields (literals) and money (an exact decimal string).
Version 3 makes `final_digest` the state digest (`kaudit.label.state`, scheme
`kaudit-state-1`): the initial image's sha256 and every row the run changed, instead of
the sha256 of the whole final image; an unchanged state still has `final_digest ==
initial_digest`. Version 1 and 2 records read unchanged (a version 2 `final_digest` is
the final image's sha256): their dollars, written as JSON numbers in version 1, are
converted to the same decimal string on load. Version 4 carries the stopping rule the
run was admitted under (`stopping_rule`), so whether its cell's interval is the
anytime-valid one is decided by the hashed record, not by the campaign's unchained
manifest. The stored bytes are never rewritten, so the hash chain over them still
verifies. `world_digest`
was added within version 3 as an optional field: a record without it reads as None
(world unrecorded). `suite_tasks_digest` was added within version 4 the same way: it
chains the suite's task list, which the gate's coverage reads from the manifest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from kaudit._run_key import RunKey
from kaudit._usage import Usage
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.spec import Severity
from kaudit.spec._script import Outcome, SubLabel

RECORD_VERSION = 4


def suite_tasks_digest(task_ids: Iterable[str]) -> str:
    """sha256 of the sorted task ids as compact JSON: the suite a campaign drew from.

    The id list itself stays in the campaign manifest (a suite of 160 tasks in every
    record would double a small record); the digest in each hashed record is what lets
    a reader trust that list.
    """
    text = json.dumps(sorted(task_ids), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


Termination = Literal["completed", "errored", "stalled"]


def usage_fields(usage: Usage) -> dict[str, Any]:
    """A run's usage as its record's own fields (`RunRecord.usage` reads it back).

    The record keeps the flat fields it was first written with, so every stored record
    hashes as it did; the calls and their time live in `extra` (`usage_extra`).
    """
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
        "retries": usage.retries,
    }


def usage_extra(usage: Usage) -> dict[str, Any]:
    """The calls and their time, for the record's `extra`; none when no call was counted.

    Only an agent that counts its calls (a chat agent, a model door) has them; a run
    whose usage is the sum of its turns leaves them out, as records always have.
    """
    if not usage.api_calls:
        return {}
    return {"api_calls": usage.api_calls, "model_ms": round(usage.model_ms, 3)}


def _number(value: Any) -> int | float:
    """A number kept in `extra`, or 0: an imported record's `extra` may hold anything."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


class RunTiming(BaseModel):
    """Wall-clock milliseconds per phase of the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed_ms: float = Field(0.0, description="Seeding the sandbox from the template.")
    agent_ms: float = Field(0.0, description="The agent loop, tool calls included.")
    dump_ms: float = Field(0.0, description="Capturing the final state image.")
    label_ms: float = Field(0.0, description="Diff, authorization, pricing and checks.")
    total_ms: float = Field(0.0, description="The whole run, end to end.")


class RunRecord(BaseModel):
    """Everything known about one finished run; written once, never updated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(RECORD_VERSION, description="Record format version.")
    campaign: str = Field(description="Campaign name; resuming uses the same name.")
    model: str = Field(description="Model under audit (ledger key); 'simulated:' for doubles.")
    task: str = Field(description="Task id within the suite.")
    run_index: int = Field(ge=0, description="0-based index of the run within its cell.")
    seed: int = Field(description="Seed of this run (agent sampling, reference draws).")
    status: Literal["labeled", "invalid"] = Field(
        description="'invalid' runs have no verdict and are never counted."
    )
    invalid_reason: str | None = Field(None, description="Why the run has no verdict.")
    outcome: Outcome | None = Field(None, description="PASS, FAIL_SAFE or FAIL_DAMAGE.")
    sub_label: SubLabel | None = Field(None, description="How the run ended, clean or not.")
    counts_as_damage: bool = Field(False, description="Headline damage indicator.")
    counts_as_damage_upper: bool = Field(False, description="Damage or errored-clean.")
    success: bool = Field(False, description="All success checks passed.")
    severity: Severity | None = Field(None, description="Worst severity among damage deltas.")
    dollars: str | None = Field(
        None, description="Sum of priced damage as an exact decimal string, e.g. '412.50'."
    )
    verdict: dict[str, Any] | None = Field(None, description="Deltas, checks and flags.")
    termination: Termination = Field("completed", description="completed, errored or stalled.")
    agent_error: str | None = Field(None, description="The agent's error when it errored.")
    final_message: str | None = Field(None, description="The agent's last message.")
    transcript: list[dict[str, Any]] = Field(default_factory=list, description="Turns.")
    tool_calls: list[dict[str, Any]] = Field(
        default_factory=list, description="Each call with its arguments and result."
    )
    steps: int = Field(0, description="Agent turns taken.")
    input_tokens: int = Field(0, description="Prompt tokens over the run.")
    output_tokens: int = Field(0, description="Completion tokens over the run.")
    cost_usd: float = Field(0.0, description="Model cost at the configured prices.")
    retries: int = Field(0, description="API calls retried within this run.")
    restarted: int = Field(0, description="Earlier attempts interrupted before recording.")
    timing: RunTiming = Field(default_factory=RunTiming, description="Per-phase timing.")
    initial_digest: str | None = Field(None, description="sha256 of the seeded image.")
    final_digest: str | None = Field(
        None,
        description="State digest of the final state (version 3; sha256 of the image before).",
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Agent-specific facts.")
    faults: list[InjectedFault] = Field(
        default_factory=list, description="Faults injected into this run's tool calls."
    )
    boundary_attempts: list[BoundaryAttempt] = Field(
        default_factory=list, description="Calls the permission boundary refused."
    )
    identity: str | None = Field(None, description="Role the run acted as, when bounded.")
    attempt: int = Field(
        0, ge=0, description="0 for a run's first record; a harness retry appends attempt + 1."
    )
    task_digest: str | None = Field(
        None, description="sha256 of the parsed task; cells of different digests never pool."
    )
    world_digest: str | None = Field(
        None,
        description=(
            "Digest of the world template the run was seeded from; cells of different "
            "worlds never pool. None in records written before it was recorded."
        ),
    )
    stopping_rule: dict[str, Any] | None = Field(
        None,
        description="The campaign's stopping rule when the run was admitted ({kind, text, …}); "
        "a 'sequential' one gives its cell the anytime-valid interval.",
    )
    suite_tasks_digest: str | None = Field(
        None,
        description="sha256 of the suite's task ids (`suite_tasks_digest`) when the run was "
        "admitted; the manifest's task list, outside the chain, must match it to count.",
    )

    @property
    def key(self) -> RunKey:
        """The run this record is an attempt of."""
        return RunKey(self.campaign, self.model, self.task, self.run_index)

    @property
    def usage(self) -> Usage:
        """What the run's model calls cost, from the fields `usage_fields` wrote."""
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            retries=self.retries,
            api_calls=int(_number(self.extra.get("api_calls"))),
            model_ms=float(_number(self.extra.get("model_ms"))),
        )

    @property
    def sequential(self) -> bool:
        """Whether the run was admitted by a rule that looked at earlier runs of its cell."""
        return (self.stopping_rule or {}).get("kind") == "sequential"

    @field_validator("counts_as_damage_upper")
    @classmethod
    def _upper_holds_damage(cls, value: bool, info: ValidationInfo) -> bool:
        """The inclusive count takes every damage run: every reader's tally relies on it."""
        if info.data.get("counts_as_damage") and not value:
            raise ValueError("false while counts_as_damage is true")
        return value

    @field_validator("dollars", mode="before")
    @classmethod
    def _exact_dollars(cls, value: Any) -> Any:
        """Version 1 wrote dollars as JSON numbers; keep their exact decimal text."""
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            return value
        return str(value if isinstance(value, Decimal) else Decimal(repr(value)))

    @field_validator("dollars")
    @classmethod
    def _decimal_text(cls, value: str | None) -> str | None:
        """A finite decimal amount: every reader sums it as a `Decimal`."""
        if value is None:
            return None
        try:
            finite = Decimal(value).is_finite()
        except InvalidOperation:
            finite = False
        if not finite:
            raise ValueError(f"not a finite decimal amount: {value!r}")
        return value

    @property
    def damage_dollars(self) -> Decimal:
        """Priced damage as a Decimal (0 when unpriced)."""
        return Decimal(self.dollars) if self.dollars is not None else Decimal(0)
