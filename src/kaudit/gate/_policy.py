"""The gate policy: per authority level, the evidence a ledger must hold."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kaudit.ledger._stack import STACK_DOMINATED_SHARE
from kaudit.spec import Severity, read_yaml
from kaudit.spec._faults import FaultKind
from kaudit.spec._load import validate_file_data
from kaudit.spec._script import Outcome

Authority = Literal["propose", "write_with_approval", "autonomous_write"]
DamageLabel = Literal["strict", "inclusive"]
AUTHORITIES: tuple[Authority, ...] = ("propose", "write_with_approval", "autonomous_write")
DEFAULT_POLICY = "default_policy.yaml"


class FaultScenario(BaseModel):
    """A fault the ledger must have exercised, and the outcomes runs that hit it may have."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    fault: FaultKind
    task: str | None = Field(None, description="Only runs of this task count; any if omitted.")
    min_runs: int | None = Field(
        None,
        ge=1,
        description="Runs that must have hit the fault to count as tested; min_k if omitted.",
    )
    outcomes: tuple[Outcome, ...] = Field(
        ("PASS", "FAIL_SAFE", "FAIL_DAMAGE"),
        min_length=1,
        description="Outcomes allowed for runs that hit the fault.",
    )

    def name(self) -> str:
        """How reasons and the untested list name the scenario."""
        return f"fault {self.fault} on {self.task or 'any task'}"


class BoundaryProbe(BaseModel):
    """A boundary-probe task the ledger must have run under its identity."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    task: str
    min_runs: int | None = Field(
        None, ge=1, description="Runs under the identity to count as tested; min_k if omitted."
    )

    def name(self) -> str:
        """How reasons and the untested list name the scenario."""
        return f"boundary probe {self.task}"


class Requirement(BaseModel):
    """What one authority level needs. Unset bounds are not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    min_k: int = Field(1, ge=0, description="Counted runs every cell needs.")
    alpha: float = Field(
        0.05,
        gt=0.0,
        lt=1.0,
        description=(
            "Every bound is the anytime-valid one-sided (1 - alpha/2) upper bound, on every "
            "cell: below the true rate at any number of runs with probability <= alpha/2, "
            "however often the gate is asked."
        ),
    )
    damage_label: DamageLabel = Field(
        "strict",
        description=(
            "Which damage label the bounds count: 'strict' (damage seen) or 'inclusive' "
            "(also errored runs whose state could not be judged clean; counted at every "
            "severity when unpriced)."
        ),
    )
    cover_suite: bool = Field(
        True, description="Every task of the campaigns' suite must have run; missing ones deny."
    )
    max_damage_upper: float | None = Field(
        None, ge=0.0, le=1.0, description="Max upper bound on the damage rate per cell."
    )
    max_severity_upper: dict[Severity, float] = Field(
        default_factory=dict,
        description="Per severity class: max upper bound on damage at that severity or worse.",
    )
    max_boundary_attempts: int | None = Field(
        None, ge=0, description="Boundary attempts a cell may hold (0: none tolerated)."
    )
    max_stack_error_share: float = Field(
        STACK_DOMINATED_SHARE,
        ge=0.0,
        le=1.0,
        description="Cells whose share of runs ended by API errors (after all retries) "
        "reaches this measure the serving stack, not the model, and are never granted on.",
    )
    faults: tuple[FaultScenario, ...] = ()
    boundary_probes: tuple[BoundaryProbe, ...] = ()


class GatePolicy(BaseModel):
    """Evidence rules per authority level; a level the policy does not name is denied."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    version: Literal[1] = 1
    authorities: dict[Authority, Requirement]


def load_policy(path: Path | None = None) -> GatePolicy:
    """The policy at `path`, or the built-in default; errors name the file and field."""
    if path is None:
        resource = files("kaudit.gate").joinpath(DEFAULT_POLICY)
        path = Path(str(resource))
    return validate_file_data(GatePolicy, read_yaml(path), path)
