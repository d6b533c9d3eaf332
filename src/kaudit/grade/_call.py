"""`kaudit.judge`: grade a ledger file with an LLM judge in one call, as `kaudit grade` does.

Opening the ledger under its writer lock, building the judge from a model spec and the
rubric, reading the suite's prompts and running the grading loop belong together: a
notebook that grades a ledger should not have to repeat what the command does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kaudit._threads import outside_running_loop
from kaudit.grade._config import judge_config
from kaudit.grade._grade import GradingResult, grade_ledger
from kaudit.grade._judge import Judge
from kaudit.grade._rubric import RUBRIC, load_rubric
from kaudit.ledger import Anchor, GradeRecord, Ledger
from kaudit.ledger._grades import GradeStore
from kaudit.suites import task_prompts

__all__ = ["Graded", "judge_ledger"]


@dataclass(frozen=True)
class Graded:
    """What a grading call did, and the ledger's head after it (it pins the grades too)."""

    result: GradingResult
    head: Anchor

    def summary(self) -> str:
        """The closing line `kaudit grade` prints."""
        r, u = self.result, self.result.usage
        return (
            f"judge {r.judge_key}: {r.graded} graded, {r.failed} failed (recorded, never "
            f"counted), {r.skipped} already graded; tokens {u.input_tokens:,} in / "
            f"{u.output_tokens:,} out, {u.retries} retries, judge cost ${u.cost_usd:,.4f}, "
            f"judge time {u.model_ms / 1000:,.1f} s"
        )


def judge_ledger(
    ledger: str | Path,
    judge: str,
    *,
    suite: str = "builtin",
    campaign: str | None = None,
    rubric: str | Path | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    api_key_env: str | None = None,
    concurrency: int = 4,
    on_grade: Callable[[GradeRecord], None] | None = None,
) -> Graded:
    """Grade every counted run of `ledger` that this judge has not graded yet.

    `judge` is a model spec (`openai:NAME`, `anthropic:NAME`) or a model YAML; the
    sampling options override the YAML's. `suite` gives the task prompts the runs were
    given. Resumes like `kaudit run`; a failed grade is recorded, never retried. Raises
    `LedgerError` when either chain is broken or another process writes the ledger.
    """
    config = judge_config(
        judge,
        base_url=base_url,
        temperature=temperature,
        max_tokens=max_tokens,
        api_key_env=api_key_env,
    )
    grader = Judge(config, load_rubric(Path(rubric)) if rubric is not None else RUBRIC)
    prompts = task_prompts(suite)

    def work() -> Graded:
        with Ledger(ledger) as store, store.writer_lock(), GradeStore(store) as grades:
            result = asyncio.run(
                grade_ledger(
                    store, grades, grader, prompts,
                    campaign=campaign, concurrency=concurrency, on_grade=on_grade,
                )
            )  # fmt: skip
            return Graded(result, store.head())

    return outside_running_loop(work, "kaudit-judge")
