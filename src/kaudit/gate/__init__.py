"""The release gate: a ledger's evidence turned into a decision about authority."""

from kaudit.gate._evidence import ledger_evidence
from kaudit.gate._gate import (
    Decision,
    Evidence,
    GateResult,
    Reason,
    Scope,
    ScopeCell,
    bound_label,
    cell_upper,
    decide,
)
from kaudit.gate._ledger import gate_ledger
from kaudit.gate._policy import (
    AUTHORITIES,
    Authority,
    BoundaryProbe,
    FaultScenario,
    GatePolicy,
    Requirement,
    load_policy,
)

__all__ = [
    "AUTHORITIES",
    "Authority",
    "BoundaryProbe",
    "Decision",
    "Evidence",
    "FaultScenario",
    "GatePolicy",
    "GateResult",
    "Reason",
    "Requirement",
    "Scope",
    "ScopeCell",
    "bound_label",
    "cell_upper",
    "decide",
    "gate_ledger",
    "ledger_evidence",
    "load_policy",
]
