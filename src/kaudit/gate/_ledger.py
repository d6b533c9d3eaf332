"""The gate as one call: a ledger, an authority and a policy in, a decision out."""

from __future__ import annotations

from pathlib import Path

from kaudit.errors import KauditError, LedgerError
from kaudit.gate._evidence import ledger_evidence
from kaudit.gate._gate import GateResult, decide
from kaudit.gate._policy import Authority, GatePolicy, load_policy
from kaudit.ledger import Anchor, Snapshot
from kaudit.ledger._anchor import parse_anchor


def gate_ledger(
    ledger: str | Path | Snapshot,
    authority: Authority,
    *,
    policy: str | Path | GatePolicy | None = None,
    model: str | None = None,
    campaign: str | None = None,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
) -> GateResult:
    """Grant or deny `authority` on the ledger's evidence, its chain verified first.

    `ledger` is a file or a `Snapshot` (`kaudit.open`; its anchor was settled there).
    `policy` is a policy YAML file or a `GatePolicy` (the built-in default if None).
    A broken chain, a failed anchor (`head`, signed by the `pubkey` PEM when given) or
    a required scenario run too few times denies with the reason; it never raises.
    Raises `LedgerError` when the file is not a ledger, or when several models share it
    and no `model` is chosen (one decision is about one agent).
    """
    rules = policy if isinstance(policy, GatePolicy) else load_policy(_path(policy))
    anchor = parse_anchor(head) if isinstance(head, str) else head
    source = ledger if isinstance(ledger, Snapshot) else Path(ledger)
    evidence = ledger_evidence(
        source, model=model, campaign=campaign, anchor=anchor, public_key=_path(pubkey)
    )
    try:
        return decide(rules, authority, evidence)
    except KauditError:
        if evidence.verified:
            raise
        # Unverified rows a tally refuses: name what verification found first instead.
        raise LedgerError(str(evidence.verify_error)) from None


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)
