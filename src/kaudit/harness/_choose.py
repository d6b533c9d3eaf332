"""Choosing where a campaign's runs execute: this process, a Ray cluster, or a plugin's.

Executors are named, like agents and substrates, through the one generic registry:
`local` and `ray` register here, a third-party package through the `kaudit.executors`
entry-point group (`name = "pkg.module:factory"`), and `kaudit run --executor NAME`
takes any registered name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kaudit.agents import Agent
from kaudit.harness._executor import Executor, LocalExecutor
from kaudit.harness._ray import RayExecutor
from kaudit.registry import Registry


@dataclass(frozen=True)
class ExecutorSettings:
    """What every executor is built from, whatever runs it."""

    concurrency: int = 8
    """Runs in flight at once, over every model."""
    model_caps: Mapping[str, int] = field(default_factory=dict)
    """A model's own cap on runs in flight (a provider's rate limit), by agent name."""
    address: str | None = None
    """Where a cluster executor connects; None starts or finds a local one."""


ExecutorFactory = Callable[[ExecutorSettings], Executor]
"""`factory(settings)`: an executor ready for `run_campaign`."""

ENTRY_POINT_GROUP = "kaudit.executors"
"""Third-party packages register executor factories here."""

EXECUTORS: Registry[ExecutorFactory] = Registry("executor", ENTRY_POINT_GROUP)
"""Executor factories by the name `kaudit run --executor` takes."""


def register_executor(name: str) -> Callable[[ExecutorFactory], ExecutorFactory]:
    """Register a factory for `--executor NAME` (a later registration replaces it)."""
    return EXECUTORS.register(name)


@register_executor("local")
def _local(settings: ExecutorSettings) -> Executor:
    return LocalExecutor(settings.concurrency, settings.model_caps)


@register_executor("ray")
def _ray(settings: ExecutorSettings) -> Executor:
    return RayExecutor(
        settings.address, concurrency=settings.concurrency, model_caps=settings.model_caps
    )


def build_executor(
    name: str,
    concurrency: int,
    agents: Sequence[Agent],
    address: str | None = None,
) -> Executor:
    """The executor `name` registers, with each model's own cap on runs in flight.

    Raises `KauditError` listing the known names when `name` is not registered.
    """
    factory = EXECUTORS.get(name)
    caps = {a.name: cap for a in agents if (cap := a.max_concurrent_runs)}
    return factory(ExecutorSettings(concurrency, caps, address))
