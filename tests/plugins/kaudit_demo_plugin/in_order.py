"""A third-party executor, `--executor in-order`: one run at a time, in plan order.

Found through its `kaudit.executors` entry point; it counts the jobs it ran, so a test
can tell it was used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kaudit.harness import ExecutorSettings, JobRunner, OnResult, RunJob

RAN: list[tuple[str, str, str, int]] = []
"""The key of every job this executor ran, in order (this process only)."""


class InOrder:
    """Runs each job to its end before it takes the next; the settings' caps hold trivially."""

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings

    def describe(self) -> dict[str, Any]:
        return {"kind": "in-order", "plugin": "kaudit-demo-plugin"}

    async def execute(self, jobs: Iterable[RunJob], run: JobRunner, on_result: OnResult) -> None:
        for job in jobs:
            result = await run(job)
            RAN.append(job.key)
            if result is not None:
                on_result(result)


def in_order(settings: ExecutorSettings) -> InOrder:
    """The `kaudit.executors` factory."""
    return InOrder(settings)
