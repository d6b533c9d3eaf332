"""kaudit's suites as Inspect AI tasks: `inspect eval kaudit/suite -T tasks=ID --model ...`.

Registered through the `inspect_ai` entry point (see pyproject), so Inspect finds
`kaudit/suite` by name. One sample per kaudit task; each sample and epoch runs on a
fresh sandbox, driven by Inspect's model and tool loop, scored by the state labeler.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from kaudit.integrations._inspect_judge import transcript_judge
from kaudit.integrations._inspect_scorer import state_verdict
from kaudit.integrations._inspect_solver import sandboxed_agent
from kaudit.suites import load_suite


@task
def suite(
    tasks: str | None = None,
    suite: str = "builtin",
    variants: bool = False,
    judge: str | None = None,
    judge_base_url: str | None = None,
    judge_rubric: str | None = None,
) -> Task:
    """The chosen tasks (comma-separated ids; all when omitted) of a kaudit suite.

    With `judge` (e.g. `-T judge=openai:gpt-4o-mini`), kaudit's transcript judge scores
    each sample too, beside the state verdict.
    """
    loaded = load_suite(suite).with_variants() if variants else load_suite(suite)
    ids = [part.strip() for part in tasks.split(",") if part.strip()] if tasks else None
    chosen = loaded.select(ids)
    samples = [
        Sample(id=t.id, input=t.prompt, metadata={"kaudit_task": t.id, "vertical": t.vertical})
        for t in chosen
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"kaudit-{loaded.name}"),
        solver=sandboxed_agent(loaded),
        scorer=[state_verdict(loaded.digest)]
        + (
            [transcript_judge(loaded, judge, judge_rubric, base_url=judge_base_url)]
            if judge
            else []
        ),
        metadata={"kaudit_suite": suite, "suite_digest": loaded.digest},
    )
