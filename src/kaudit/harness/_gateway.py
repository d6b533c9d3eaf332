"""The gateway a run's calls go through: Recording ∘ Limits ∘ Boundary ∘ Faults ∘ Tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kaudit.boundary import BoundaryLayer, guard_for
from kaudit.faults import FaultLayer
from kaudit.gateway import Layer, LimitsLayer, RecordingLayer, ToolGateway
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.spec import FaultRule, Identity
from kaudit.substrate import ForeignKey, Sandbox
from kaudit.tools import Tool, ToolContext


@dataclass(frozen=True)
class RunGateway:
    """One run's gateway with handles on the layers whose observations the record keeps."""

    gateway: ToolGateway
    recording: RecordingLayer
    faults: FaultLayer | None
    boundary: BoundaryLayer | None

    def injected_faults(self) -> list[InjectedFault]:
        """Every fault injected so far, in call order."""
        return list(self.faults.injected) if self.faults else []

    def boundary_attempts(self) -> list[BoundaryAttempt]:
        """Every refused attempt so far, in call order."""
        return list(self.boundary.attempts) if self.boundary else []


def build_gateway(
    tools: Mapping[str, Tool],
    sandbox: Sandbox,
    *,
    seed: int,
    faults: Sequence[FaultRule] = (),
    identity: Identity | None = None,
    ownership: Sequence[ForeignKey] = (),
) -> RunGateway:
    """The standard layers over `sandbox`; boundary and faults only when asked for.

    `ownership` is what the world declares belongs to what, for the identity's scope.
    Raises `SubstrateError` when an identity is asked of a sandbox whose substrate
    brings no guard (`GuardedSandbox`; SQLite's and PostgreSQL's do).
    """
    recording = RecordingLayer()
    layers: list[Layer] = [recording, LimitsLayer()]
    boundary: BoundaryLayer | None = None
    if identity is not None:
        boundary = BoundaryLayer(sandbox.db, guard_for(sandbox, identity, ownership))
        layers.append(boundary)
    fault_layer = FaultLayer(faults, seed, sandbox.db) if faults else None
    if fault_layer is not None:
        layers.append(fault_layer)
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db, identity=identity), layers)
    return RunGateway(gateway, recording, fault_layer, boundary)
