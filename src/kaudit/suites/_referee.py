"""A suite's own judge, run beside kaudit's verdict: an imported benchmark's success checks.

An imported suite (AgentDojo) scores runs its own way. A referee gives that score for
each kaudit run, from the same final state, so the report can set the two side by side
and `kaudit validate` can prove the suite's checks agree with each replayed script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kaudit.spec import Task
from kaudit.substrate import Dump


class Referee(Protocol):
    """Judges a finished run the imported suite's way; `name` keys it in the record's extra."""

    @property
    def name(self) -> str:
        """The key of the judgment in `RunRecord.extra`."""
        ...

    def judge(
        self,
        task: Task,
        final: Dump,
        final_message: str | None,
        tool_calls: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any] | None:
        """The judgment of one run (plain JSON data), or None for a task it does not know."""
        ...

    def script_mismatches(
        self, task: Task, script: str, judged: Mapping[str, Any] | None
    ) -> list[str]:
        """How the judgment of replayed `script` differs from what the suite must say of it."""
        ...
