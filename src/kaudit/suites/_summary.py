"""What a suite holds, task by task, read without seeding a world: `kaudit tasks list`."""

from __future__ import annotations

from typing import Any

from kaudit.spec import Task
from kaudit.suites._suite import Suite, load_suite

__all__ = ["task_prompts", "task_summaries", "task_summary"]


def task_summary(task: Task) -> dict[str, Any]:
    """One task as plain data: id, vertical, irreversibility, tools, counterexamples, ..."""
    return {
        "id": task.id,
        "vertical": task.vertical,
        "irreversibility": task.irreversibility,
        "priced": task.priced,
        "lever": task.lever,
        "tools": list(task.tools),
        "counterexamples": [
            {"name": s.name, "expected_outcome": s.expected.outcome} for s in task.counterexamples
        ],
        "faults": [rule.model_dump(mode="json", exclude_none=True) for rule in task.faults],
        "identity": task.identity.role if task.identity else None,
    }


def task_summaries(
    suite: str | Suite = "builtin", *, variants: bool = False
) -> list[dict[str, Any]]:
    """`task_summary` of every task of `suite` (a name as `load_suite` takes, or a `Suite`).

    With `variants`, each task's generated distractor variant follows the tasks.
    """
    loaded = load_suite(suite) if isinstance(suite, str) else suite
    chosen = loaded.with_variants() if variants else loaded
    return [task_summary(task) for task in chosen.tasks.values()]


def task_prompts(suite: str | Suite = "builtin") -> dict[str, tuple[str, str]]:
    """(system prompt, prompt) of every task, by id: what a judge reads beside a transcript.

    A suite named by text is read without seeding a world (`load_suite(check=False)`):
    grading a ledger never needs the suite's substrate.
    """
    loaded = load_suite(suite, check=False) if isinstance(suite, str) else suite
    return {task.id: (task.system_prompt, task.prompt) for task in loaded.tasks.values()}
