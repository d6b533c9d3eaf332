"""The campaign's provenance manifest: what ran, with what, where and when.

A resumed campaign keeps its first start time and appends one entry per invocation, so
the manifest shows every host and executor that contributed runs.
"""

from __future__ import annotations

import functools
import platform
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kaudit._version import __version__
from kaudit.agents import Agent
from kaudit.agents.chat import redact
from kaudit.spec import Task
from kaudit.suites import Suite


@functools.cache
def git_commit() -> str | None:
    """The commit of the kaudit source checkout, when it is one (None for a wheel)."""
    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def agent_entry(agent: Agent) -> dict[str, Any]:
    """An agent's description with secrets redacted, plus its sampling parameters."""
    entry: dict[str, Any] = redact(agent.describe())
    sampling = agent.sampling()
    if sampling is not None:
        entry["sampling"] = sampling
    return entry


def build_manifest(
    *,
    k: int,
    seed: int,
    stopping_rule: dict[str, Any],
    suite: Suite,
    agents: Sequence[Agent],
    tasks: Sequence[Task],
    executor: dict[str, Any],
    previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest at the start of an invocation; `previous` is the stored one, if any."""
    now = time.time()
    substrates: dict[str, Any] = {}
    for task in tasks:
        substrate = suite.substrate(task)
        substrates[task.world] = {
            "kind": type(substrate).__name__,
            "name": substrate.name,
            "template_digest": substrate.template_digest,
            **substrate.describe(),
        }
    invocation = {
        "started_at": now,
        "ended_at": None,
        "host": platform.node(),
        "executor": executor,
        "substrate": substrates,
        "kaudit_version": __version__,
    }
    earlier = list(previous.get("invocations", [])) if previous else []
    return {
        "kaudit_version": __version__,
        "git_commit": git_commit(),
        "suite": suite.describe(),
        "suite_digest": suite.digest,
        # Every task the suite holds, run or not: the gate lists those a campaign left out.
        "suite_tasks": sorted(suite.tasks),
        "templates": {world: entry["template_digest"] for world, entry in substrates.items()},
        "substrate": substrates,
        "agents": {agent.name: agent_entry(agent) for agent in agents},
        "k": k,
        "seed": seed,
        "stopping_rule": stopping_rule,
        "executor": executor,
        "host": platform.node(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "started_at": previous.get("started_at", now) if previous else now,
        "ended_at": None,
        "invocations": [*earlier, invocation],
    }


def finish_manifest(manifest: dict[str, Any], counts: dict[str, Any]) -> dict[str, Any]:
    """The manifest with this invocation's end time and what it did."""
    now = time.time()
    invocations = [dict(entry) for entry in manifest["invocations"]]
    invocations[-1].update(ended_at=now, **counts)
    return manifest | {"ended_at": now, "invocations": invocations}
