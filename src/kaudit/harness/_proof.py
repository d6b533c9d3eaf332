"""A task's own proof, checked before `kaudit run` scores any agent on it.

`kaudit validate` replays every oracle and counterexample; `run` must hold the same
promise, that a task-file mistake (a check that fails on the task's own oracle, a
merge key that changed a field) is never scored as agent behaviour. Before a campaign
starts, each task's oracle is replayed on a fresh sandbox and must PASS; a task whose
oracle fails stops the campaign before any run is recorded.

The proof is cached per (task digest, world template digest, kaudit version) under
`$KAUDIT_CACHE/proofs/`: a task proved once is not replayed by the next campaign or
resume. Only the oracle is replayed here (the counterexamples stay `validate`'s): of
AgentDojo's 1,080 scripts, a first campaign replays each chosen task's oracle once (a
sandbox run without a model call), and a later campaign or resume none.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from kaudit._version import __version__
from kaudit.errors import SpecError
from kaudit.harness._validate import check_script
from kaudit.spec import Task, task_digest
from kaudit.suites import Suite

__all__ = ["proof_cache", "prove_tasks"]


def proof_cache() -> Path:
    """`$KAUDIT_CACHE/proofs`, else `~/.cache/kaudit/proofs`."""
    root = os.environ.get("KAUDIT_CACHE") or Path.home() / ".cache" / "kaudit"
    return Path(root) / "proofs"


def _proof_key(suite: Suite, task: Task) -> str:
    world = suite.substrate(task).template_digest
    text = f"{__version__}\n{task_digest(task)}\n{world}"
    return hashlib.sha256(text.encode()).hexdigest()


async def prove_tasks(suite: Suite, tasks: Sequence[Task]) -> int:
    """Replay each task's oracle unless proved before; returns how many were replayed.

    Raises SpecError naming the first task whose oracle does not PASS, with what its
    verdict said instead; nothing is cached for it.
    """
    folder = proof_cache()
    replayed = 0
    for task in tasks:
        marker = folder / _proof_key(suite, task)
        if marker.is_file():
            continue
        oracle = task.scripts()[0]
        check = await check_script(suite, task, oracle)
        replayed += 1
        if not check.passed:
            raise SpecError(
                task.id,
                "oracle",
                "the task's own oracle does not PASS, so no run of it is scored: "
                + "; ".join(check.mismatches)
                + " (`kaudit validate` shows the evidence)",
            )
        folder.mkdir(parents=True, exist_ok=True)
        marker.touch()
    return replayed
