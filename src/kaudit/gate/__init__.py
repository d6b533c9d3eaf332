"""The release gate: a ledger's evidence turned into a decision about authority."""

from kaudit.gate._evidence import ledger_evidence
from kaudit.gate._gate import Decision, Evidence, GateResult, decide
from kaudit.gate._policy import GatePolicy, load_policy

__all__ = [
    "Decision",
    "Evidence",
    "GatePolicy",
    "GateResult",
    "decide",
    "ledger_evidence",
    "load_policy",
]
