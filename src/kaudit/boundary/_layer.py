"""The boundary layer: refused calls leave no trace in state and one record per attempt."""

from __future__ import annotations

from kaudit.gateway import Forward, GatewayCall
from kaudit.gateway._events import BoundaryAttempt
from kaudit.substrate import Db, Denial, Guard
from kaudit.tools import ToolResult


class _Refused(Exception):
    """Unwinds the transaction of a call the boundary refused."""


class BoundaryLayer:
    """Runs each call in a transaction; a call the boundary refused is rolled back whole.

    Refusals come from the sandbox's guard, its substrate's own (SQLite's authorizer and
    triggers, PostgreSQL's roles and row-level security: table grant, organization scope),
    or from a tool's own scope check (`BoundaryViolation`, e.g. self-approval). Either
    way the agent sees a failed call and `attempts` gets one entry per refused table/key.
    """

    def __init__(self, db: Db, guard: Guard | None) -> None:
        self.attempts: list[BoundaryAttempt] = []
        self._db = db
        self._guard = guard

    def handle(self, call: GatewayCall, forward: Forward) -> ToolResult:
        """Forward the call; roll it back and record it when the boundary refused it."""
        if not call.ready:
            return forward(call)
        if self._guard is not None:
            self._guard.take()
        refused: list[Denial] = []
        result = ToolResult(ok=False)
        try:
            with self._db.atomic():
                if self._guard is not None:
                    self._guard.enter()
                result = forward(call)
                refused = self._guard.take() if self._guard is not None else []
                blocked = result.blocked
                if blocked is not None:
                    refused.append(Denial(blocked.table, blocked.key, blocked.reason))
                if refused:
                    raise _Refused
        except _Refused:
            pass
        finally:
            if self._guard is not None:
                self._guard.leave()
        if not refused:
            return result
        for denial in refused:
            self.attempts.append(
                BoundaryAttempt(
                    call=call.index,
                    call_id=call.id,
                    tool=call.name,
                    table=denial.table,
                    key=denial.key if denial.key is not None else _key_of(call),
                    reason=denial.reason,
                )
            )
        return ToolResult(ok=False, error=f"not permitted for this identity: {refused[0].reason}")


def _key_of(call: GatewayCall) -> str | None:
    """The call's id-like arguments, as the best key a table-level refusal can name."""
    ids = {k: v for k, v in (call.arguments or {}).items() if k.endswith("_id") and v is not None}
    return ", ".join(f"{k}={v}" for k, v in ids.items()) or None
