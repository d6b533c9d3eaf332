"""Executors are found by name in one registry: the built-ins and any registered later."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kaudit.agents import ScriptedAgent
from kaudit.errors import KauditError
from kaudit.harness import Executor, ExecutorSettings, register_executor
from kaudit.harness._choose import EXECUTORS, build_executor
from kaudit.harness._executor import LocalExecutor
from kaudit.harness._ray import RayExecutor


class Capped(ScriptedAgent):
    """A scripted agent with a cap on its runs in flight, as a rate-limited model has."""

    @property
    def max_concurrent_runs(self) -> int | None:
        return 3


@pytest.fixture
def registered() -> Iterator[list[ExecutorSettings]]:
    """Registers `inline` for one test, recording the settings it was built with."""
    seen: list[ExecutorSettings] = []

    @register_executor("inline")
    def inline(settings: ExecutorSettings) -> Executor:
        seen.append(settings)
        return LocalExecutor(1)

    yield seen
    EXECUTORS._entries.pop("inline")


def test_local_and_ray_are_built_from_their_names_with_the_models_caps() -> None:
    """Bug caught: a built-in dropped from the registry, or the models' caps and the
    concurrency lost on the way to the executor."""
    agents = [Capped("oracle"), ScriptedAgent("oracle")]
    local = build_executor("local", 5, agents)
    assert isinstance(local, LocalExecutor)
    assert local.describe() == {
        "kind": "local",
        "concurrency": 5,
        "model_caps": {"simulated:scripted:oracle": 3},
    }
    ray = build_executor("ray", 4, agents, "ray://head:10001")
    assert isinstance(ray, RayExecutor)
    described: dict[str, Any] = ray.describe()
    assert (described["address"], described["concurrency"]) == ("ray://head:10001", 4)


def test_a_registered_executor_is_built_from_its_name(registered: list[ExecutorSettings]) -> None:
    """Bug caught: `build_executor` keeping a closed list of names (the old
    `Literal["local", "ray"]`), so nothing registered could be chosen."""
    executor = build_executor("inline", 7, [Capped("oracle")], "here")
    assert isinstance(executor, LocalExecutor)
    assert registered == [ExecutorSettings(7, {"simulated:scripted:oracle": 3}, "here")]
    assert {"inline", "local", "ray"} <= set(EXECUTORS.names())


def test_an_unknown_executor_lists_the_known_ones() -> None:
    """Bug caught: an unknown name falling back to the local executor silently."""
    with pytest.raises(KauditError, match=r"unknown executor 'slurm'; known: \[.*'local'.*'ray'"):
        build_executor("slurm", 1, [])
