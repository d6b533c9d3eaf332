"""Choosing where a campaign's runs execute: this process, or a Ray cluster."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from kaudit.agents import Agent
from kaudit.errors import KauditError
from kaudit.harness._executor import Executor, LocalExecutor
from kaudit.harness._ray import RayExecutor

ExecutorKind = Literal["local", "ray"]


def build_executor(
    kind: ExecutorKind,
    concurrency: int,
    agents: Sequence[Agent],
    ray_address: str | None = None,
) -> Executor:
    """The executor, with each model's own cap on runs in flight."""
    if kind not in ("local", "ray"):
        raise KauditError(f"executor must be 'local' or 'ray', got {kind!r}")
    caps = {a.name: cap for a in agents if (cap := a.max_concurrent_runs)}
    if kind == "ray":
        return RayExecutor(ray_address, concurrency=concurrency, model_caps=caps)
    return LocalExecutor(concurrency, caps)
