"""kaudit's suites as Inspect AI tasks: `inspect eval kaudit/suite -T tasks=ID --model ...`.

Registered through the `inspect_ai` entry point (see pyproject), so Inspect finds
`kaudit/suite` by name. One sample per kaudit task; each sample and epoch runs on a
fresh sandbox, driven by Inspect's model and tool loop (or any solver given instead),
scored by the state labeler. The pieces are public for tasks of one's own:
`kaudit_sandbox` (the setup), `kaudit_tools`, `tool_loop` and `state_verdict`.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from kaudit.integrations._inspect_judge import transcript_judge
from kaudit.integrations._inspect_scorer import state_verdict
from kaudit.integrations._inspect_solver import (
    close_sandbox,
    kaudit_sandbox,
    kaudit_tools,
    tool_loop,
)
from kaudit.integrations._inspect_tiktoken import ensure_o200k_cache
from kaudit.suites import load_suite

__all__ = [
    "close_sandbox",
    "kaudit_sandbox",
    "kaudit_tools",
    "state_verdict",
    "suite",
    "task_ids",
    "tool_loop",
]


def task_ids(tasks: str | list[str] | None) -> list[str] | None:
    """The chosen ids: Inspect hands `-T tasks=a,b` over as a list, `tasks=a` as a string.

    Python callers may pass either form too; a string may itself be comma-separated.
    """
    if not tasks:
        return None
    parts = tasks.split(",") if isinstance(tasks, str) else [str(t) for t in tasks]
    return [part.strip() for part in parts if part.strip()]


@task
def suite(
    tasks: str | list[str] | None = None,
    suite: str = "builtin",
    variants: bool = False,
    judge: str | None = None,
    judge_base_url: str | None = None,
    judge_rubric: str | None = None,
) -> Task:
    """The chosen tasks (comma-separated ids or a list; all when omitted) of a kaudit suite.

    Any solver may replace kaudit's `tool_loop` (`--solver`): the sandbox is opened in the
    task's setup, which Inspect always runs, and its tools are in `state.tools`.

    With `judge` (e.g. `-T judge=openai:gpt-4o-mini`), kaudit's transcript judge scores
    each sample too, beside the state verdict.
    """
    ensure_o200k_cache()  # before Inspect first counts tokens, which offline it cannot
    loaded = load_suite(suite).with_variants() if variants else load_suite(suite)
    chosen = loaded.select(task_ids(tasks))
    samples = [
        Sample(id=t.id, input=t.prompt, metadata={"kaudit_task": t.id, "vertical": t.vertical})
        for t in chosen
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"kaudit-{loaded.name}"),
        setup=kaudit_sandbox(loaded),
        solver=tool_loop(),
        cleanup=close_sandbox,
        scorer=[state_verdict(loaded.digest)]
        + (
            [transcript_judge(loaded, judge, judge_rubric, base_url=judge_base_url)]
            if judge
            else []
        ),
        metadata={"kaudit_suite": suite, "suite_digest": loaded.digest},
    )
