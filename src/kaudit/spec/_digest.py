"""A task's identity: a digest of what it means, not of how its file is spelled."""

from __future__ import annotations

import hashlib
import json

from kaudit.spec._task import Task


def task_digest(task: Task) -> str:
    """sha256 hex of the parsed task as sorted-key compact JSON.

    Two files that parse to the same task (comments, key order, short forms) share a
    digest; any change to prompts, tools, checks or the damage spec gives a new one, so
    runs of different task versions are never pooled into one cell.
    """
    body = json.dumps(task.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()
