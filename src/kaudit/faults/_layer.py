"""Fault injection at the commit boundary, drawn reproducibly from the run's seed."""

from __future__ import annotations

import random
from collections.abc import Sequence

from kaudit.gateway import Forward, GatewayCall
from kaudit.gateway._events import InjectedFault
from kaudit.spec import FaultRule
from kaudit.spec._faults import FaultKind
from kaudit.substrate import Db
from kaudit.tools import ToolResult

CONNECTION_LOST = (
    "connection to the service was lost before a response arrived; "
    "the outcome of this call is unknown"
)
"""What the agent sees for a lost acknowledgement and for a failure before commit alike:
from the client's side the two cannot be told apart, which is the point of the test."""
TIMED_OUT = "the call timed out after 30 s; the outcome of this call is unknown"


class _RolledBack(Exception):
    """Unwinds the transaction a fail-before-commit call ran in."""


class FaultLayer:
    """Breaks writing tool calls as the rules say; every injection is kept in `injected`.

    One draw per (eligible call, rule) from a generator seeded by the run seed, so a
    resumed or repeated run meets the same faults at the same calls. The first rule
    whose draw fires wins; read-only calls are never touched. `db` is the transaction
    the calls run in; None when they run outside kaudit (a third-party tool server's
    own connection), where a failure before commit cannot be rolled back and so is
    injected by never forwarding the call.
    """

    def __init__(self, rules: Sequence[FaultRule], seed: int, db: Db | None) -> None:
        self.rules = tuple(rules)
        self.injected: list[InjectedFault] = []
        self._db = db
        self._rng = random.Random(f"kaudit-faults:{seed}")
        self._used = [0] * len(self.rules)

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        """Forward the call untouched, or with the fault its draw selects."""
        if not call.writes:
            return forward(call)
        for number, rule in enumerate(self.rules):
            if not rule.applies_to(call.name):
                continue
            if rule.limit is not None and self._used[number] >= rule.limit:
                continue
            if self._rng.random() < rule.rate:
                self._used[number] += 1
                return self._inject(rule.kind, call, forward)
        return forward(call)

    def _inject(self, kind: FaultKind, call: GatewayCall, forward: Forward) -> ToolResult:
        if kind == "fail_before_commit":
            self._fail_before_commit(call, forward)
            self._note(call, kind, committed=False, applied=0)
            return ToolResult(ok=False, error=CONNECTION_LOST)
        result = forward(call)
        if kind == "duplicate_delivery":
            again = forward(call)
            self._note(call, kind, committed=result.ok, applied=int(result.ok) + int(again.ok))
            return result
        self._note(call, kind, committed=result.ok, applied=int(result.ok))
        error = TIMED_OUT if kind == "timeout_after_commit" else CONNECTION_LOST
        return ToolResult(ok=False, error=error)

    def _fail_before_commit(self, call: GatewayCall, forward: Forward) -> None:
        """Run the call in a transaction and roll it back: the work happens, the commit never.

        Without kaudit's transaction the call is not forwarded: the connection dropped
        before the request reached the server.
        """
        if self._db is None:
            return
        try:
            with self._db.atomic():
                forward(call)
                raise _RolledBack
        except _RolledBack:
            pass

    def _note(self, call: GatewayCall, kind: FaultKind, *, committed: bool, applied: int) -> None:
        self.injected.append(
            InjectedFault(
                call=call.index,
                call_id=call.id,
                tool=call.name,
                kind=kind,
                committed=committed,
                applied=applied,
            )
        )
