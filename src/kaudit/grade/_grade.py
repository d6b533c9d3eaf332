"""Grading a ledger: every counted run a judge has not graded yet, each grade chained.

Like `kaudit run`, grading resumes: a run this judge already graded (or failed to grade)
is skipped, so running the same command again only grades what is missing. A recorded
failure is not retried either; it is data about the judge, and retrying until it answers
would hide how often it does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

from kaudit._usage import Usage
from kaudit.errors import KauditError
from kaudit.grade._case import case_of
from kaudit.grade._judge import Judge, JudgeAnswer
from kaudit.ledger import GradeRecord, Ledger, RunRecord, walk_chain
from kaudit.ledger._grades import GradeStore, walk_grades

__all__ = ["GradingResult", "TaskPrompts", "grade_ledger", "prompts_for"]

TaskPrompts = Mapping[str, tuple[str, str]]
"""(system prompt, user prompt) by task id: what each run's agent was given."""


@dataclass
class GradingResult:
    """What one `kaudit grade` invocation did."""

    judge_key: str
    graded: int = 0
    failed: int = 0
    skipped: int = 0
    usage: Usage = field(default_factory=Usage)
    """The judge's calls of this invocation: tokens, cost, retries, time summed over them."""


def prompts_for(task: str, prompts: TaskPrompts) -> tuple[str, str]:
    """A task's prompts; a distractor variant (`id~distractors`) has its base task's."""
    found = prompts.get(task) or prompts.get(task.split("~", 1)[0])
    if found is None:
        raise KauditError(
            f"task {task!r} of the ledger is not in the suite given (`suite`): the judge "
            "needs the prompt its runs were given"
        )
    return found


def _grade_record(
    record: RunRecord, run_hash: str, judge: Judge, answer: JudgeAnswer
) -> GradeRecord:
    return GradeRecord(
        **record.key._asdict(),
        attempt=record.attempt,
        run_hash=run_hash,
        judge=judge.config.key,
        judge_key=judge.key,
        rubric=judge.rubric.id,
        rubric_digest=judge.rubric.digest,
        sampling=judge.sampling(),
        prompt_digest=answer.prompt_digest,
        status="failed" if answer.grade is None else "graded",
        grade=answer.grade,
        reason=answer.reason,
        failure=answer.failure,
        raw_reply=answer.raw_reply,
        **asdict(answer.usage),  # the grade keeps every field of `Usage` under its name
    )


async def grade_ledger(
    ledger: Ledger,
    store: GradeStore,
    judge: Judge,
    prompts: TaskPrompts,
    *,
    campaign: str | None = None,
    concurrency: int = 4,
    on_grade: Callable[[GradeRecord], None] | None = None,
) -> GradingResult:
    """Grade every labeled run (newest attempt) of `ledger` that `judge` has not graded.

    Both chains are verified first: a grade of a rewritten run would be meaningless,
    and a grade appended to a broken grades chain would hide the break. Each grade is
    appended as soon as it is answered, so an interruption loses none.
    """
    walk_chain(ledger)
    walk_grades(ledger)
    hashes = store.run_hashes()
    done = store.graded(judge.key)
    result = GradingResult(judge.key)
    todo: list[RunRecord] = []
    for record in ledger.records(campaign):
        key = (*record.key, record.attempt)
        if record.status != "labeled":
            continue
        if key in done:
            result.skipped += 1
            continue
        prompts_for(record.task, prompts)  # every missing prompt is an error before a call
        todo.append(record)
    gate = asyncio.Semaphore(concurrency)

    async def one(record: RunRecord) -> None:
        system, prompt = prompts_for(record.task, prompts)
        async with gate:
            answer = await judge.grade(
                case_of(record, system, prompt), record.key.run_id, record.seed
            )
        grade = _grade_record(record, hashes[(*record.key, record.attempt)], judge, answer)
        store.append(grade)
        result.graded += grade.status == "graded"
        result.failed += grade.status == "failed"
        result.usage += grade.usage
        if on_grade is not None:
            on_grade(grade)

    tasks = [asyncio.ensure_future(one(record)) for record in todo]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        # a setup error (or Ctrl-C): stop the other calls before the client closes, so
        # none of them is recorded as a judge failure it was not
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        await judge.aclose()
    return result
