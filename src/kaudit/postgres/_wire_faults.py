"""Which of the agent's own commits meets a fault, drawn reproducibly from the run's seed.

The same rules as the tool layer's (`FaultRule`), drawn the same way: one draw per
(eligible commit, rule) from a generator seeded by the run seed, the first rule whose
draw fires wins, `limit` caps a rule's injections per run. At the wire the "tool" is
`sql`: a rule narrowed to named tools never fires here. Three kinds exist at the wire:
a lost acknowledgement, a failure before the commit, and a timeout after it;
`duplicate_delivery` (the same call delivered twice) has no meaning for a client's own
transaction and never fires here.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

from kaudit.spec import FaultRule
from kaudit.spec._faults import FaultKind

WIRE_TOOL = "sql"
"""The tool name wire faults and boundary attempts are recorded under."""
WIRE_KINDS: tuple[FaultKind, ...] = (
    "ack_lost_after_commit",
    "fail_before_commit",
    "timeout_after_commit",
)


class WireFaults:
    """Draws a fault (or none) for each commit of the agent's writing transactions.

    Thread-safe: the proxy's connections draw from one generator, in the order their
    commits reach it, so one agent replayed on one seed meets the same faults.
    """

    def __init__(self, rules: Sequence[FaultRule], seed: int) -> None:
        self.rules = tuple(rules)
        self._rng = random.Random(f"kaudit-wire-faults:{seed}")
        self._used = [0] * len(self.rules)
        self._lock = threading.Lock()

    def draw(self) -> FaultKind | None:
        """The fault for the next eligible commit, or None to let it through."""
        with self._lock:
            for number, rule in enumerate(self.rules):
                if rule.kind not in WIRE_KINDS or not rule.applies_to(WIRE_TOOL):
                    continue
                if rule.limit is not None and self._used[number] >= rule.limit:
                    continue
                if self._rng.random() < rule.rate:
                    self._used[number] += 1
                    return rule.kind
            return None
